package ephemeral

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/drift-gitops/drift/internal/subprocess"
)

// The control plane must not outlive drift, even when drift is SIGKILLed and cannot
// stop it. envtest builds the etcd and kube-apiserver commands itself (no SysProcAttr
// of ours, no environment of ours), so drift points envtest's binary paths at wrappers
// that run drift again as the reaper: it ties the real binary's life to drift's (see
// reap in reaper_*.go) and then runs it.

// ReaperMain is the reaper subprocess's main; args are drift's pid, a file to write
// the reaper's pid to (the binary's, after exec on Linux; its process group's
// elsewhere), the binary to run and the binary's arguments.
func ReaperMain(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "drift: the reaper needs drift's pid, a pid file and a binary to run")
		return 2
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil || parent <= 1 {
		fmt.Fprintf(os.Stderr, "drift: the reaper needs drift's pid, got %q\n", args[0])
		return 2
	}
	if err := os.WriteFile(args[1], []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "drift: the reaper cannot record its pid: %v\n", err)
		return 1
	}
	return reap(parent, args[2], args[3:])
}

// childEnv is the environment of the real binary: drift's, without the role.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, subprocess.Env+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// writeExecutable writes a program that is run right after. It holds syscall.ForkLock
// while the file is open for writing, so that no process forked meanwhile (another
// goroutine starting a server or a render worker) inherits the write descriptor
// before its exec closes it: while any process holds it, running the file fails with
// "text file busy" (ETXTBSY).
func writeExecutable(name string, data []byte) error {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	return os.WriteFile(name, data, 0o700)
}
