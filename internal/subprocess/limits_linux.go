package subprocess

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// LimitMemory caps the data segment. RLIMIT_DATA counts the writable private
// mappings (the Go heap, goroutine and thread stacks) and not the address space the
// runtime reserves without using, so it can be close to what the worker really uses;
// RLIMIT_AS would have to exceed the runtime's ~1.2 GB of reservations just to start.
func LimitMemory(max int64) error {
	lim := uint64(max)
	if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: lim, Max: lim}); err != nil {
		return fmt.Errorf("RLIMIT_DATA %d: %w", max, err)
	}
	return nil
}

// DieWithParent has the kernel kill the worker when drift goes away.
func DieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// MaxRSS is the peak resident memory of an ended process, in bytes.
func MaxRSS(state *os.ProcessState) int64 {
	if state == nil {
		return 0
	}
	ru, ok := state.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss * 1024 // Linux counts kilobytes
}
