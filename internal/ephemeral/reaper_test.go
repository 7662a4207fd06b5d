//go:build unix

package ephemeral

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/subprocess"
)

// TestMain lets the test binary play drift's reaper, as drift's main does.
func TestMain(m *testing.M) {
	if subprocess.Role() == subprocess.RoleReaper {
		os.Exit(ReaperMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeBinary writes a script that prints its arguments, one a line, and the role it
// sees, into a directory whose name needs quoting.
func fakeBinary(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "it's a $dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "etcd")
	script := "#!/bin/sh\nfor a in \"$@\"; do echo \"arg:$a\"; done\necho \"role:$" + subprocess.Env + "\"\n"
	if err := writeExecutable(bin, []byte(script)); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestWrapperRunsTheBinaryWithEnvtestsArgumentsAndWithoutTheRole(t *testing.T) {
	t.Parallel()
	bin := fakeBinary(t)
	wrappers, err := guard(filepath.Join(t.TempDir(), "bin"), bin)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(wrappers[0]) != "etcd" {
		t.Fatalf("envtest names the process by its path: %s", wrappers[0])
	}
	out, err := exec.Command(wrappers[0], "--data-dir=/x y", "$(touch /tmp/pwned)", "'").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "arg:--data-dir=/x y\narg:$(touch /tmp/pwned)\narg:'\nrole:\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestReaperWhoseDriftIsGoneRunsNothing(t *testing.T) {
	t.Parallel()
	bin := fakeBinary(t)
	// A pid that is not the reaper's parent: drift exited before the reaper checked.
	gone := strconv.Itoa(1 << 22)
	cmd := exec.Command(os.Args[0], gone, filepath.Join(t.TempDir(), "pid"), bin, "started")
	cmd.Env = append(os.Environ(), subprocess.Env+"="+subprocess.RoleReaper)
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "arg:started") {
		t.Fatalf("the reaper ran the binary for a drift that is gone (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "has exited") {
		t.Fatalf("the reaper should say why it did not start the binary:\n%s", out)
	}
}

func TestReaperRefusesMalformedArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"123", "pid"}, {"x", "pid", "/bin/true"}, {"1", "pid", "/bin/true"}, {"-5", "pid", "/bin/true"}} {
		if code := ReaperMain(args); code != 2 {
			t.Errorf("ReaperMain(%q) = %d, want 2", args, code)
		}
	}
}

func TestAbortKillsWhatTheWrappersStartedAndLeavesNothingToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "kube-apiserver")
	// exec: the fake server is the process the reaper becomes (Linux) or starts.
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	wrappers, err := guard(filepath.Join(dir, "bin"), bin)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wrappers[0])
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as envtest starts it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if data, _ := os.ReadFile(wrappers[0] + pidSuffix); len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the reaper never recorded its pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
	abort(filepath.Join(dir, "bin"))
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the guarded process outlived abort")
	}
	if _, err := os.Stat(wrappers[0]); err == nil {
		t.Fatal("the wrapper is still there for envtest to start again")
	}
}
