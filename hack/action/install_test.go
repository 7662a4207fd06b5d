// Package action tests the Action's shell steps against local servers.
package action

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// release is a fake release's assets: a drift that prints its version, per platform.
func release(t *testing.T, version string, platforms ...string) map[string][]byte {
	t.Helper()
	assets := map[string][]byte{}
	var sums strings.Builder
	script := []byte("#!/bin/sh\necho drift " + version + "\n")
	for _, p := range platforms {
		var buf bytes.Buffer
		name := "drift_" + strings.TrimPrefix(version, "v") + "_" + p
		if strings.HasPrefix(p, "windows") {
			name += ".zip"
			zw := zip.NewWriter(&buf)
			w, _ := zw.Create("drift.exe")
			w.Write(script)
			zw.Close()
		} else {
			name += ".tar.gz"
			gz := gzip.NewWriter(&buf)
			tw := tar.NewWriter(gz)
			tw.WriteHeader(&tar.Header{Name: "drift", Mode: 0o755, Size: int64(len(script))})
			tw.Write(script)
			tw.WriteHeader(&tar.Header{Name: "LICENSE", Mode: 0o644, Size: 2})
			tw.Write([]byte("x\n"))
			tw.Close()
			gz.Close()
		}
		assets[name] = buf.Bytes()
		sum := sha256.Sum256(buf.Bytes())
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	assets["checksums.txt"] = []byte(sums.String())
	return assets
}

// server serves releases under /download/<tag>/<asset> and the release list under
// /api/repos/drift-gitops/drift/releases, as GitHub does; seen, when set, hears each
// request.
func server(t *testing.T, releases map[string]map[string][]byte, seen ...func(*http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, f := range seen {
			f(r)
		}
		if r.URL.Path == "/api/repos/drift-gitops/drift/releases" {
			var tags []string
			for tag := range releases {
				tags = append(tags, fmt.Sprintf(`{"tag_name": "%s", "draft": false}`, tag))
			}
			fmt.Fprintf(w, "[%s]", strings.Join(tags, ", "))
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/download/"), "/")
		if len(parts) == 2 {
			if data, ok := releases[parts[0]][parts[1]]; ok {
				w.Write(data)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type outcome struct {
	code            int
	log, outputs    string
	installed, tool string
}

func install(t *testing.T, srv *httptest.Server, ref, runnerOS, runnerArch string) outcome {
	t.Helper()
	tmp, output := t.TempDir(), filepath.Join(t.TempDir(), "output")
	cmd := exec.Command("bash", "install.sh")
	cmd.Env = append(os.Environ(), "DRIFT_ACTION_REF="+ref, "DRIFT_ACTION_REPOSITORY=drift-gitops/drift",
		"DRIFT_RELEASES_URL="+srv.URL+"/download", "DRIFT_API_URL="+srv.URL+"/api",
		"RUNNER_OS="+runnerOS, "RUNNER_ARCH="+runnerArch, "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+output)
	log, _ := cmd.CombinedOutput()
	outputs, _ := os.ReadFile(output)
	o := outcome{code: cmd.ProcessState.ExitCode(), log: string(log), outputs: string(outputs)}
	if bin := filepath.Join(tmp, "drift-bin", "drift"); fileExists(bin) {
		o.installed = bin
		if out, err := exec.Command("sh", bin).Output(); err == nil {
			o.tool = strings.TrimSpace(string(out))
		}
	}
	return o
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestInstallFromARelease(t *testing.T) {
	all := []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_arm64"}
	tampered := release(t, "v1.3.0", all...)
	tampered["drift_1.3.0_linux_amd64.tar.gz"] = append([]byte(nil), release(t, "v1.2.9", "linux_amd64")["drift_1.2.9_linux_amd64.tar.gz"]...)
	noSums := release(t, "v0.9.0", all...)
	delete(noSums, "checksums.txt")
	srv := server(t, map[string]map[string][]byte{
		"v1.2.3":  release(t, "v1.2.3", all...),
		"v1.10.0": release(t, "v1.10.0", all...),
		"v1.3.0":  tampered,
		"v2.0.0":  release(t, "v2.0.0", "linux_amd64"),
		"v0.9.0":  noSums,
	})
	for _, c := range []struct {
		name, ref, os, arch string
		code                int
		installed           bool
		tool, log           string
	}{
		{"exact version, linux amd64", "v1.2.3", "Linux", "X64", 0, true, "drift v1.2.3", "checksum verified"},
		{"major tag: the newest under it (1.10 after 1.3)", "v1", "macOS", "ARM64", 0, true, "drift v1.10.0", "darwin/arm64"},
		{"minor tag", "v1.2", "Linux", "ARM64", 0, true, "drift v1.2.3", ""},
		{"windows zip", "v1.2.3", "Windows", "X64", 0, true, "drift v1.2.3", "windows/amd64"},
		{"a branch: built from source", "main", "Linux", "X64", 0, false, "", "::notice title=drift::the Action is used at main, not a release tag: building drift from source"},
		{"an asset missing: built from source", "v2.0.0", "macOS", "X64", 0, false, "", "release v2.0.0 has no drift_2.0.0_darwin_amd64.tar.gz: building drift from source"},
		{"no release under the tag", "v3", "Linux", "X64", 0, false, "", "no release of drift-gitops/drift is under v3"},
		{"checksum mismatch refused", "v1.3.0", "Linux", "X64", 1, false, "", "::error title=drift::drift_1.3.0_linux_amd64.tar.gz of release v1.3.0 does not match its checksum"},
		{"no checksums refused", "v0.9.0", "Linux", "X64", 1, false, "", "no checksums.txt: refusing an unverified binary"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := install(t, srv, c.ref, c.os, c.arch)
			if o.code != c.code || (o.installed != "") != c.installed || o.tool != c.tool || !strings.Contains(o.log, c.log) {
				t.Fatalf("exit %d, installed %q running %q\n%s", o.code, o.installed, o.tool, o.log)
			}
			if want := fmt.Sprintf("installed=%t", c.installed); c.code == 0 && !strings.Contains(o.outputs, want) {
				t.Errorf("outputs %q lack %s", o.outputs, want)
			}
		})
	}
}

// TestInstallScriptForUsers: the repository's install.sh, as a user runs it (one
// command), finds the platform itself and installs the newest release.
func TestInstallScriptForUsers(t *testing.T) {
	srv := server(t, map[string]map[string][]byte{
		"v1.2.3": release(t, "v1.2.3", "linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"),
		"v1.4.0": release(t, "v1.4.0", "linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"),
	})
	dir := t.TempDir()
	cmd := exec.Command("sh", "../../install.sh")
	cmd.Env = append(os.Environ(), "DRIFT_RELEASES_URL="+srv.URL+"/download", "DRIFT_API_URL="+srv.URL+"/api", "DRIFT_INSTALL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, err := exec.Command("sh", filepath.Join(dir, "drift")).Output()
	if err != nil || strings.TrimSpace(string(got)) != "drift v1.4.0" || !strings.Contains(string(out), "checksum verified") {
		t.Fatalf("installed %q (%v)\n%s", got, err, out)
	}
	// A token authenticates the release listing, and goes nowhere else.
	var mu sync.Mutex
	auth := map[string]string{}
	srv2 := server(t, map[string]map[string][]byte{"v1.4.0": release(t, "v1.4.0", "linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64")},
		func(r *http.Request) { mu.Lock(); auth[r.URL.Path] = r.Header.Get("Authorization"); mu.Unlock() })
	cmd = exec.Command("sh", "../../install.sh", "v1")
	cmd.Env = append(os.Environ(), "DRIFT_RELEASES_URL="+srv2.URL+"/download", "DRIFT_API_URL="+srv2.URL+"/api", "DRIFT_INSTALL_DIR="+dir, "DRIFT_API_TOKEN=tok-123")
	out, err = cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "tok-123") {
		t.Fatalf("with a token: %v\n%s", err, out)
	}
	for path, got := range auth {
		want := ""
		if strings.HasPrefix(path, "/api/") {
			want = "Bearer tok-123"
		}
		if got != want {
			t.Errorf("%s was sent Authorization %q, want %q", path, got, want)
		}
	}
	if len(auth) != 3 {
		t.Errorf("requests: %v", auth)
	}
	cmd = exec.Command("sh", "../../install.sh", "v9.9.9")
	cmd.Env = append(os.Environ(), "DRIFT_RELEASES_URL="+srv.URL+"/download", "DRIFT_API_URL="+srv.URL+"/api", "DRIFT_INSTALL_DIR="+dir)
	out, _ = cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 3 || !strings.Contains(string(out), "release v9.9.9 has no drift_9.9.9_") {
		t.Errorf("a missing release: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}
}
