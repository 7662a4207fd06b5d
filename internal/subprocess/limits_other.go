//go:build !linux

package subprocess

import (
	"os"
	"os/exec"
)

// LimitMemory leaves only the garbage collector's soft limit where the OS has no
// limit that Go's reservations fit under.
func LimitMemory(int64) error { return nil }

// DieWithParent: no such request exists here; the worker ends with its pipes.
func DieWithParent(*exec.Cmd) {}

// MaxRSS is unknown where no memory limit is set: crashes are told apart by the
// runtime's words alone.
func MaxRSS(*os.ProcessState) int64 { return 0 }
