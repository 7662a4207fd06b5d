package ephemeral

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// reap asks the kernel to SIGKILL this process when drift exits (PR_SET_PDEATHSIG),
// checks that drift has not exited already, and becomes the binary: the death signal
// survives exec (it is cleared only for set-user-ID binaries).
//
// The signal is a thread's setting and fires when the thread that forked the process
// exits, not only the process. In the reaper, the thread is locked so that the setting
// and the exec happen on the same one. In drift, the forking thread is whichever ran
// envtest's start: Go ends a thread only when a goroutine locked to it exits without
// unlocking, which drift never does, so that thread lives as long as drift.
func reap(parent int, binary string, args []string) int {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "drift: cannot tie %s to drift's life: %v\n", binary, err)
		return 1
	}
	if unix.Getppid() != parent {
		fmt.Fprintf(os.Stderr, "drift: not starting %s: drift (pid %d) has exited\n", binary, parent)
		return 1
	}
	err := unix.Exec(binary, append([]string{binary}, args...), childEnv())
	fmt.Fprintf(os.Stderr, "drift: failed to run %s: %v\n", binary, err)
	return 127
}
