//go:build unix

package render

import (
	"os"
	"syscall"
)

// killedBy names the signal that ended a process, "" if none did.
func killedBy(state *os.ProcessState) string {
	if state == nil {
		return ""
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
