// Package releasetest serves a release of drift built from the tree as GitHub serves
// releases, and install.sh as raw.githubusercontent.com does, for the tests that run
// a pipeline template's script as its runner would (hack/gitlab, hack/gitea,
// hack/bitbucket, hack/azure): the script installs this drift with the real
// install.sh, verified against the release's checksums.txt.
package releasetest

import (
	"archive/tar"
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
	"runtime"
	"strings"
	"testing"
)

// InstallPath is where the server serves install.sh: a script's install URL is the
// server's URL with it (DRIFT_RELEASES_URL is the server's URL with /download).
const InstallPath = "/drift-gitops/drift/main/install.sh"

// Serve builds drift from the tree at root and serves it as release version (v9.9.9):
// drift_<version>_<os>_<arch>.tar.gz, checksums.txt and an empty checksums.txt.sig
// under /download/<version>/, and install.sh at InstallPath. It returns the server,
// closed when the test ends, and the path of the drift it serves.
func Serve(t testing.TB, root, version string) (*httptest.Server, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "drift")
	build := exec.Command("go", "build", "-o", bin, "./cmd/drift")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	install, err := os.ReadFile(filepath.Join(root, "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "drift", Mode: 0o755, Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(data)
	_ = tw.Close()
	_ = gz.Close()
	asset := fmt.Sprintf("drift_%s_%s_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOOS, runtime.GOARCH)
	sum := sha256.Sum256(buf.Bytes())
	files := map[string][]byte{
		"/download/" + version + "/" + asset:          buf.Bytes(),
		"/download/" + version + "/checksums.txt":     []byte(hex.EncodeToString(sum[:]) + "  " + asset + "\n"),
		"/download/" + version + "/checksums.txt.sig": nil,
		InstallPath: install,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if data, ok := files[r.URL.Path]; ok {
			_, _ = w.Write(data)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, bin
}
