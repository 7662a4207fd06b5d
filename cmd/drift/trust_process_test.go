package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// controlPlaneOf lists the pids of the etcd and kube-apiserver processes whose command
// line mentions dir, by name.
func controlPlaneOf(dir string) map[string]string {
	found := map[string]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(data), dir) {
			continue
		}
		exe := filepath.Base(strings.SplitN(string(data), "\x00", 2)[0])
		if exe == "etcd" || exe == "kube-apiserver" {
			found[exe] = e.Name()
		}
	}
	return found
}

// alive reports a process that exists and is not a zombie.
func alive(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses, which may hold spaces.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestSIGKILLedDriftTakesItsControlPlaneAlongAndTheNextStartRemovesItsFiles(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to find the control plane's processes")
	}
	dir := demoRepo(t)
	tmp := t.TempDir()
	cmd := startDrift(t, tmp, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	deadline := time.Now().Add(60 * time.Second)
	var plane map[string]string
	for plane = controlPlaneOf(tmp); len(plane) < 2; plane = controlPlaneOf(tmp) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the ephemeral control plane never started: %v", plane)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	deadline = time.Now().Add(5 * time.Second)
	for name, pid := range plane {
		for alive(pid) {
			if time.Now().After(deadline) {
				for _, p := range plane {
					_ = syscall.Kill(atoi(t, p), syscall.SIGKILL)
				}
				t.Fatalf("%s (pid %s) outlived the SIGKILLed drift", name, pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	left, _ := os.ReadDir(tmp)
	if len(left) == 0 {
		t.Fatal("the killed drift left no directory behind: the test proves nothing about the next start")
	}

	// The next drift with an ephemeral server removes what the killed one left.
	next := startDrift(t, tmp, "diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if err := next.Wait(); next.ProcessState.ExitCode() != 1 {
		t.Fatalf("the next run: exit %d (%v), want 1", next.ProcessState.ExitCode(), err)
	}
	assertCleanedUp(t, tmp)
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// stalledKubeconfig writes a kubeconfig for an API server that accepts TLS connections
// and never answers, with a bearer token.
func stalledKubeconfig(t *testing.T, token string) string {
	t.Helper()
	block := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(block) }) // runs first: the handlers return, Close does not wait
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: stalled, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: %q}}]
contexts: [{name: stalled, context: {cluster: stalled, user: u}}]
current-context: stalled
`, srv.URL, token)
	if err := os.WriteFile(kc, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// runDrift runs drift in-process with exactly args (no test kubeconfig added).
func runDrift(args ...string) outcome {
	var out, errOut bytes.Buffer
	code := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return outcome{code: code, stdout: out.String(), stderr: errOut.String()}
}

func TestTimeoutBoundsConnectingToAServerThatNeverAnswers(t *testing.T) {
	t.Parallel()
	const token = "stalled-token-7f3a9c2e"
	kc := stalledKubeconfig(t, token)
	r := repo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n"})
	o := runDrift("diff", "--repo", r.Dir, "--ref", "HEAD", "--kubeconfig", kc, "--timeout", "3s")
	if o.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
	}
	// The run's deadline ended it, not client-go's own (32s before the fix), which
	// says nothing of --timeout.
	if !strings.Contains(o.stderr, "timed out after 3s while connecting to") {
		t.Fatalf("the error should say the run timed out while connecting:\n%s", o.stderr)
	}
	if strings.Contains(o.stdout+o.stderr, token) {
		t.Fatalf("the token is in the output:\n%s%s", o.stdout, o.stderr)
	}
}

func TestKubeconfigErrorsNameTheFileAndQuoteNothingFromIt(t *testing.T) {
	t.Parallel()
	r := repo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n"})
	secret := "ghp_S3cr3tT0kenValue0123456789abcdefABCD"
	for _, c := range []struct{ name, content string }{
		// client-go's decoder quotes these: no kind "…" is registered for version "…".
		{"a secret as its kind", "apiVersion: v1\nkind: " + secret + "\n"},
		{"a secret as its apiVersion", "apiVersion: " + secret + "\nkind: Config\n"},
		{"a bare token", secret + "\n"},
		{"a token in a mapping", "apiVersion: v1\nkind: Config\nclusters: " + secret + "\n"},
		{"an env file", "GITHUB_TOKEN=" + secret + "\nAWS_SECRET_ACCESS_KEY: [" + secret + "\n"},
		{"json", `{"apiVersion": "v1", "kind": "Config", "users": "` + secret + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			kc := filepath.Join(t.TempDir(), "leaky-kubeconfig")
			if err := os.WriteFile(kc, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			o := runDrift("diff", "--repo", r.Dir, "--ref", "HEAD", "--kubeconfig", kc, "--timeout", "20s")
			if o.code != 2 {
				t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
			}
			if !strings.Contains(o.stderr, kc) || !strings.Contains(o.stderr, "not a valid kubeconfig") {
				t.Fatalf("the error should name the file and say it is not a kubeconfig:\n%s", o.stderr)
			}
			all := o.stdout + o.stderr
			for _, part := range []string{secret, secret[:12], secret[len(secret)-12:], "GITHUB_TOKEN", "AWS_SECRET"} {
				if strings.Contains(all, part) {
					t.Fatalf("the output quotes %q from the file:\n%s", part, all)
				}
			}
		})
	}
}

// TestTokensOfExecPluginsAreScrubbed: the runner's kubeconfig gets its token from an
// exec plugin, so drift never sees it in the configuration; a server (or a proxy in
// front of it) that echoes the request's Authorization header in its error must not
// put the token in drift's output.
func TestTokensOfExecPluginsAreScrubbed(t *testing.T) {
	t.Parallel()
	const token = "exec-plugin-token-5d81c0ffee"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "upstream refused %s", r.Header.Get("Authorization"))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "plugin")
	credential := `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"` + token + `"}}`
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\necho '"+credential+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, srv.URL, plugin)
	if err := os.WriteFile(kc, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	r := repo(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n"})
	o := runDrift("diff", "--repo", r.Dir, "--ref", "HEAD", "--kubeconfig", kc, "--timeout", "20s")
	if o.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", o.code, o.stderr)
	}
	if !strings.Contains(o.stderr, "upstream refused Bearer ***") {
		t.Fatalf("the server's answer should be shown with the token scrubbed:\n%s", o.stderr)
	}
	if strings.Contains(o.stdout+o.stderr, token) {
		t.Fatalf("the exec plugin's token is in the output:\n%s%s", o.stdout, o.stderr)
	}
}
