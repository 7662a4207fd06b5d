package main

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drift-gitops/drift/internal/testenv"
)

// envtestArchive packs the test's own etcd and kube-apiserver as the envtest release
// index packs them, with hash its SHA-512.
func envtestArchive(t *testing.T) (path, hash string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "envtest.tar.gz")
	hash, err := testenv.EnvtestArchive(os.Getenv("KUBEBUILDER_ASSETS"), path, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	return path, hash
}

// envtestIndex serves an index listing version for this platform with hash, and the
// archive; requests counts what it was asked.
func envtestIndex(t *testing.T, archive, version, hash string, requests *atomic.Int32) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch r.URL.Path {
		case "/envtest-releases.yaml":
			fmt.Fprintf(w, "releases:\n  %s:\n    envtest-%s-%s-%s.tar.gz:\n      hash: %s\n      selfLink: %s/archive.tar.gz\n",
				version, version, runtime.GOOS, runtime.GOARCH, hash, srv.URL)
		case "/archive.tar.gz":
			http.ServeFile(w, r, archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSetupDownloadsFromTheEnvtestIndex: drift setup takes the binaries from the
// envtest release index, verified, and a preview runs on them; a wrong hash is refused
// with nothing installed; a version the index lacks, or an index out of reach, falls
// back to the source build (here without Go on PATH, so it says what it needs);
// --from-source does not ask the index.
func TestSetupDownloadsFromTheEnvtestIndex(t *testing.T) {
	archive, hash := envtestArchive(t)
	var requests atomic.Int32
	srv := envtestIndex(t, archive, "v1.36.3", hash, &requests)
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	t.Setenv("DRIFT_ENVTEST_INDEX_URL", srv.URL+"/envtest-releases.yaml")
	o := drift(t, "setup")
	dir := strings.TrimPrefix(strings.TrimSpace(o.stdout), "etcd and kube-apiserver are in ")
	if o.code != 0 || !strings.Contains(o.stderr, "downloading etcd and kube-apiserver v1.36.3 for "+runtime.GOOS+"/"+runtime.GOARCH) || strings.Contains(o.stderr, "building") {
		t.Fatalf("setup: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if st, err := os.Stat(filepath.Join(dir, bin)); err != nil || st.Mode()&0o100 == 0 {
			t.Fatalf("%s not installed in %s: %v", bin, dir, err)
		}
	}
	// A real preview on the downloaded binaries.
	t.Setenv("KUBEBUILDER_ASSETS", dir)
	rep, o := driftJSON(t, "diff", "--repo", demoRepo(t), "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != 1 || rep.Summary.Modify != 3 || !rep.Complete {
		t.Fatalf("preview on the downloaded binaries: exit %d %+v\n%s", o.code, rep.Summary, o.stderr)
	}
	// Installed: asked again, nothing is fetched.
	before := requests.Load()
	if o := drift(t, "setup"); o.code != 0 || requests.Load() != before {
		t.Errorf("a second setup fetched again (exit %d)", o.code)
	}

	// An index without the default version: the newest patch of its minor stands in,
	// installed under its own version, and the ephemeral server finds it there.
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	older := envtestIndex(t, archive, "v1.36.2", hash, &requests)
	t.Setenv("DRIFT_ENVTEST_INDEX_URL", older.URL+"/envtest-releases.yaml")
	o = drift(t, "setup")
	if o.code != 0 || !strings.Contains(o.stderr, "does not list v1.36.3: taking v1.36.2, the newest v1.36 it lists") || !strings.HasSuffix(strings.TrimSpace(o.stdout), filepath.Join("assets", "v1.36.2")) {
		t.Fatalf("setup without v1.36.3 in the index: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	t.Setenv("DRIFT_ENVTEST_INDEX_URL", "http://127.0.0.1:1/envtest-releases.yaml")
	if o := drift(t, "setup"); o.code != 0 || !strings.HasSuffix(strings.TrimSpace(o.stdout), filepath.Join("assets", "v1.36.2")) {
		t.Errorf("setup with v1.36.2 installed and the index out of reach: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	t.Setenv("PATH", t.TempDir()+string(os.PathListSeparator)+"/usr/bin:/bin") // no Go: the source build stops at once
	if o := drift(t, "setup", "--kube-version", "v1.36.3"); o.code != 2 || !strings.Contains(o.stderr, "building them instead") {
		t.Errorf("--kube-version v1.36.3 named: exit %d, want the source build\n%s", o.code, o.stderr)
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	if o := drift(t, "diff", "--repo", demoRepo(t), "--cluster", "ephemeral", "--base", "base", "--ref", "main"); o.code != 1 {
		t.Fatalf("preview on v1.36.2 from the cache: exit %d\n%s", o.code, o.stderr)
	}

	// A wrong hash: refused, nothing installed, no source build.
	t.Setenv("DRIFT_CACHE_DIR", t.TempDir())
	bad := envtestIndex(t, archive, "v1.36.3", strings.Repeat("0", 128), &requests)
	t.Setenv("DRIFT_ENVTEST_INDEX_URL", bad.URL+"/envtest-releases.yaml")
	o = drift(t, "setup")
	if o.code != 2 || !strings.Contains(o.stderr, "the envtest archive for v1.36.3 does not match the index") || strings.Contains(o.stderr, "building them instead") {
		t.Fatalf("wrong hash: exit %d\n%s", o.code, o.stderr)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("DRIFT_CACHE_DIR"), "assets", "v1.36.3", "kube-apiserver")); err == nil {
		t.Error("a binary of an archive that failed its hash was installed")
	}

	// A version the index lacks, and an index out of reach: the source build, which
	// says what it needs when Go is missing.
	t.Setenv("PATH", t.TempDir()+string(os.PathListSeparator)+"/usr/bin:/bin")
	for _, c := range []struct{ name, index, version, why string }{
		{"missing version", srv.URL + "/envtest-releases.yaml", "v1.35.1", "v1.35.1 for " + runtime.GOOS + "/" + runtime.GOARCH + " is not in the envtest release index"},
		{"unreachable index", "http://bot:s3cret@127.0.0.1:1/envtest-releases.yaml?token=t0k", "v1.36.3", "connection refused"},
	} {
		t.Setenv("DRIFT_ENVTEST_INDEX_URL", c.index)
		o := drift(t, "setup", "--kube-version", c.version)
		if o.code != 2 || !strings.Contains(o.stderr, c.why) || !strings.Contains(o.stderr, "building them instead") ||
			!strings.Contains(o.stderr, "building kube-apiserver needs Go, which is not on PATH") {
			t.Errorf("%s: exit %d\n%s", c.name, o.code, o.stderr)
		}
		if strings.Contains(o.stderr, "s3cret") || strings.Contains(o.stderr, "t0k") {
			t.Errorf("%s: the index URL's credentials are in the output:\n%s", c.name, o.stderr)
		}
	}
	t.Setenv("DRIFT_ENVTEST_INDEX_URL", srv.URL+"/envtest-releases.yaml")
	before = requests.Load()
	if o := drift(t, "setup", "--from-source"); o.code != 2 || requests.Load() != before || !strings.Contains(o.stderr, "needs Go") {
		t.Errorf("--from-source: exit %d, %d requests to the index\n%s", o.code, requests.Load()-before, o.stderr)
	}
	if o := drift(t, "setup", "--kube-version", "latest"); o.code != 2 || !strings.Contains(o.stderr, `--kube-version "latest" is not a Kubernetes version`) {
		t.Errorf("--kube-version latest: exit %d %s", o.code, o.stderr)
	}
}

// TestPlantedBinariesNeverRun: etcd and kube-apiserver put in drift's cache by anyone
// but drift setup (scripts that would leave a marker, as a change committing a cache
// directory once could) are never run: the ephemeral preview says to run drift setup,
// and drift setup installs over them from the index instead of answering that they are
// there. A binary swapped after drift setup recorded it is refused too.
func TestPlantedBinariesNeverRun(t *testing.T) {
	archive, hash := envtestArchive(t)
	var requests atomic.Int32
	srv := envtestIndex(t, archive, "v1.36.3", hash, &requests)
	cache := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	assets := filepath.Join(cache, "assets", "v1.36.3")
	if err := os.MkdirAll(assets, 0o700); err != nil {
		t.Fatal(err)
	}
	plant := func() {
		for _, bin := range []string{"etcd", "kube-apiserver"} {
			if err := os.WriteFile(filepath.Join(assets, bin), []byte("#!/bin/sh\necho \"$@\" >> "+marker+"\nenv >> "+marker+"\nsleep 30\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	plant()
	t.Setenv("DRIFT_CACHE_DIR", cache)
	t.Setenv("KUBEBUILDER_ASSETS", "")
	t.Setenv("DRIFT_ENVTEST_INDEX_URL", srv.URL+"/envtest-releases.yaml")
	o := drift(t, "diff", "--repo", demoRepo(t), "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if o.code != exitError || !strings.Contains(o.stderr, "run drift setup") {
		t.Errorf("planted binaries: exit %d\n%s", o.code, o.stderr)
	}
	o = drift(t, "setup")
	if o.code != 0 || !strings.Contains(o.stderr, "downloading etcd and kube-apiserver") {
		t.Fatalf("setup over planted binaries: exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	if o := drift(t, "diff", "--repo", demoRepo(t), "--cluster", "ephemeral", "--base", "base", "--ref", "main"); o.code != exitChanges {
		t.Errorf("preview on the binaries drift setup installed: exit %d\n%s", o.code, o.stderr)
	}
	// Swapped after setup recorded them.
	plant()
	if o := drift(t, "diff", "--repo", demoRepo(t), "--cluster", "ephemeral", "--base", "base", "--ref", "main"); o.code != exitError || !strings.Contains(o.stderr, "is not the binary drift installed") {
		t.Errorf("swapped binaries: exit %d\n%s", o.code, o.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		data, _ := os.ReadFile(marker)
		t.Errorf("a planted binary ran:\n%.300s", data)
	}
}
