// Command coldstart simulates the Action's cold start on a fresh runner, with local
// servers standing in for GitHub's releases and the envtest release index: install
// the release's drift (hack/action/install.sh, checksum verified), install the
// ephemeral server's binaries (drift setup: a download, then a cache hit), and
// preview the demo repository, timing each step and the first request drift sends.
// It needs a snapshot release in dist/ (make release-snapshot) and KUBEBUILDER_ASSETS
// (the binaries it packs as the envtest archive). The figures are in
// docs/performance.md.
//
// -mbps serves the downloads at that many megabytes per second instead of loopback's
// speed, to see the cold start over a network.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./hack/coldstart [-mbps 25]
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/drift-gitops/drift/internal/testenv"
)

var mbps = flag.Float64("mbps", 0, "serve downloads at this many MB/s (0: as fast as loopback)")

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run() error {
	meta, err := os.ReadFile("dist/metadata.json")
	if err != nil {
		return fmt.Errorf("%w: run make release-snapshot first", err)
	}
	// A snapshot's version (0.0.1-snapshot+abc1234) is not a release's: its files are
	// served as release v0.0.1's, which the Action's @v0 resolves to.
	built := regexp.MustCompile(`"version": *"([^"]+)"`).FindStringSubmatch(string(meta))[1]
	version, _, _ := strings.Cut(built, "-")
	version = "v" + version
	sums, err := os.ReadFile("dist/checksums.txt")
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	archive := filepath.Join(work, "envtest.tar.gz")
	hash, err := testenv.EnvtestArchive(os.Getenv("KUBEBUILDER_ASSETS"), archive, gzip.BestCompression)
	if err != nil {
		return err
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/repos/drift-gitops/drift/releases":
			fmt.Fprintf(w, `[{"tag_name": "%s"}]`, version)
		case r.URL.Path == "/download/"+version+"/checksums.txt":
			io.WriteString(w, strings.ReplaceAll(string(sums), built, strings.TrimPrefix(version, "v")))
		case strings.HasPrefix(r.URL.Path, "/download/"+version+"/"):
			name := strings.Replace(filepath.Base(r.URL.Path), strings.TrimPrefix(version, "v"), built, 1)
			serveFile(w, filepath.Join("dist", name))
		case r.URL.Path == "/envtest-releases.yaml":
			fmt.Fprintf(w, "releases:\n  v1.36.3:\n    envtest-v1.36.3-%s-%s.tar.gz:\n      hash: %s\n      selfLink: %s/envtest.tar.gz\n", runtime.GOOS, runtime.GOARCH, hash, srv.URL)
		case r.URL.Path == "/envtest.tar.gz":
			serveFile(w, archive)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	st, _ := os.Stat(archive)
	speed := "at loopback speed"
	if *mbps > 0 {
		speed = fmt.Sprintf("at %g MB/s", *mbps)
	}
	fmt.Printf("release %s; envtest archive %.0f MiB; downloads served %s\n\n| step | time |\n|---|---:|\n", version, float64(st.Size())/(1<<20), speed)

	runner := filepath.Join(work, "runner")
	env := append(os.Environ(), "RUNNER_TEMP="+runner, "RUNNER_OS=Linux", "RUNNER_ARCH=X64", "GITHUB_OUTPUT="+filepath.Join(work, "output"),
		"DRIFT_ACTION_REF="+strings.Split(version, ".")[0], "DRIFT_RELEASES_URL="+srv.URL+"/download", "DRIFT_API_URL="+srv.URL+"/api",
		"DRIFT_CACHE_DIR="+filepath.Join(work, "cache"), "DRIFT_ENVTEST_INDEX_URL="+srv.URL+"/envtest-releases.yaml", "KUBEBUILDER_ASSETS=")
	if err := os.MkdirAll(runner, 0o755); err != nil {
		return err
	}
	total := time.Duration(0)
	step := func(name string, cmd *exec.Cmd) (string, error) {
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		total += d
		fmt.Printf("| %s | %.1f s |\n", name, d.Seconds())
		if err != nil {
			return string(out), fmt.Errorf("%s: %v\n%s", name, err, out)
		}
		return string(out), nil
	}
	if _, err := step("install the release's drift (download, verify checksum)", exec.Command("bash", "hack/action/install.sh")); err != nil {
		return err
	}
	drift := filepath.Join(runner, "drift-bin", "drift")
	out, err := step("drift setup, cold (download the envtest archive, verify, extract)", exec.Command(drift, "setup"))
	if err != nil {
		return err
	}
	assets := strings.TrimPrefix(strings.TrimSpace(lastLine(out)), "etcd and kube-apiserver are in ")
	if _, err := step("drift setup, warm (actions/cache restored the binaries)", exec.Command(drift, "setup")); err != nil {
		return err
	}
	demo := filepath.Join(work, "demo")
	if out, err := exec.Command("go", "run", "./hack/mkdemo", demo).CombinedOutput(); err != nil {
		return fmt.Errorf("mkdemo: %v\n%s", err, out)
	}
	env = append(env, "KUBEBUILDER_ASSETS="+assets)
	start := time.Now()
	preview := exec.Command(drift, "diff", "--repo", demo, "--cluster", "ephemeral", "--base", "base", "--ref", "main", "-v", "6", "-o", "json", "--out", filepath.Join(work, "report.json"))
	out, err = step("drift diff --cluster ephemeral on the demo (start the server, load the base, preview)", preview)
	if err != nil && !strings.Contains(err.Error(), "exit status 1") {
		return err
	}
	if first := firstRequest(out, start); first > 0 {
		fmt.Printf("| of which: from drift's start to its first request to the API server | %.1f s |\n", first.Seconds())
	}
	fmt.Printf("| **cold start in all** (install + setup cold + preview) | **%.1f s** |\n", total.Seconds())
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// firstRequest is when the first client-go request log line (-v 6) was written.
func firstRequest(log string, start time.Time) time.Duration {
	re := regexp.MustCompile(`^I\d{4} (\d\d:\d\d:\d\d\.\d+) .*round_trippers.go`)
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			t, err := time.Parse("15:04:05.000000", m[1])
			if err != nil {
				return 0
			}
			at := time.Date(start.Year(), start.Month(), start.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.Local)
			return at.Sub(start)
		}
	}
	return 0
}

// serveFile writes the file, at most *mbps megabytes a second when set.
func serveFile(w http.ResponseWriter, path string) {
	f, err := os.Open(path)
	if err != nil {
		http.NotFound(w, nil)
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		w.Header().Set("Content-Length", fmt.Sprint(st.Size()))
	}
	if *mbps <= 0 {
		io.Copy(w, f)
		return
	}
	start, sent := time.Now(), 0
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			sent += n
			if ahead := time.Duration(float64(sent)/(*mbps*1e6)*float64(time.Second)) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
		if err != nil {
			return
		}
	}
}
