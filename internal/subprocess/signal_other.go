//go:build !unix

package subprocess

import "os"

// KilledBy: no signals here.
func KilledBy(*os.ProcessState) string { return "" }
