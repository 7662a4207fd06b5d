//go:build unix

package ephemeral

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/drift-gitops/drift/internal/subprocess"
)

// guard writes, in dir, a wrapper per binary that runs it under drift's reaper, and
// returns the wrappers' paths. A wrapper is a shell script because envtest starts the
// path it is given with drift's environment and its own arguments: the script adds
// the role and the reaper's arguments, and execs, so the wrapper, the reaper and the
// binary are one process, the one envtest signals and waits for.
func guard(dir string, binaries ...string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("failed to find drift's own executable to guard the ephemeral server: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	pid := strconv.Itoa(os.Getpid())
	out := make([]string, len(binaries))
	for i, bin := range binaries {
		out[i] = filepath.Join(dir, filepath.Base(bin))
		script := "#!/bin/sh\n" +
			subprocess.Env + "=" + subprocess.RoleReaper + "\nexport " + subprocess.Env + "\n" +
			"exec " + shellQuote(self) + " " + pid + " " + shellQuote(out[i]+pidSuffix) + " " + shellQuote(bin) + ` "$@"` + "\n"
		if err := writeExecutable(out[i], []byte(script)); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", out[i], err)
		}
	}
	return out, nil
}

// pidSuffix names the file next to a wrapper where its reaper writes its pid.
const pidSuffix = ".pid"

// abort ends a start that is still under way: it removes the wrappers in dir, so that
// envtest's retries start nothing more, then SIGKILLs the process group of the last
// reaper started from each (envtest makes each its own group; the binary is in it).
// A pid file holds the latest start's pid, which is running or has just ended: pids
// are not reused that fast.
func abort(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), pidSuffix) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	entries, _ = os.ReadDir(dir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasSuffix(e.Name(), pidSuffix) {
			continue
		}
		if pid, err := strconv.Atoi(string(data)); err == nil && pid > 1 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// shellQuote quotes s for sh as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
