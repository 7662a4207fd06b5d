//go:build !linux

package render

import (
	"os"
	"os/exec"
)

// limitMemory leaves only the garbage collector's soft limit where the OS has no
// limit that Go's reservations fit under.
func limitMemory(int64) error { return nil }

func dieWithParent(*exec.Cmd) {}

// maxRSS is unknown where no memory limit is set: crashes are told apart by the
// runtime's words alone.
func maxRSS(*os.ProcessState) int64 { return 0 }
