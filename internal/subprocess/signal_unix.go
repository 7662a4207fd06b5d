//go:build unix

package subprocess

import (
	"os"
	"syscall"
)

// KilledBy names the signal that ended a process, "" if none did.
func KilledBy(state *os.ProcessState) string {
	if state == nil {
		return ""
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
