//go:build unix && !linux

package ephemeral

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// reapPoll is how often the reaper looks for drift.
const reapPoll = 250 * time.Millisecond

// reap runs the binary as its child and kills it when drift is gone: without a
// parent-death signal, it watches its own parent pid, which changes (to init or a
// subreaper) when drift exits. Signals (envtest's SIGTERM) are passed on, and the
// reaper exits as the binary does.
func reap(parent int, binary string, args []string) int {
	if os.Getppid() != parent {
		fmt.Fprintf(os.Stderr, "drift: not starting %s: drift (pid %d) has exited\n", binary, parent)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	cmd := exec.Command(binary, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, childEnv()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "drift: failed to run %s: %v\n", binary, err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(reapPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return max(exit.ExitCode(), 1)
			}
			if err != nil {
				return 1
			}
			return 0
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-tick.C:
			if os.Getppid() != parent {
				_ = cmd.Process.Kill()
				<-done
				return 1
			}
		}
	}
}
