package chartrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
	"helm.sh/helm/v3/pkg/repo/repotest"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// saveChart writes an archive of a one-template chart into dir.
func saveChart(t *testing.T, dir, name, version string) string {
	t.Helper()
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: version},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n")}},
	}
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// counting is a transport that counts the requests it carries.
type counting struct{ n atomic.Int32 }

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// privateServer serves a chart repository of web 1.0.0 (relative URLs in its index)
// to requests with basic auth username / password, 401 to others.
func privateServer(t *testing.T) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	saveChart(t, dir, "web", "1.0.0")
	index, err := repo.IndexDirectory(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "username" || p != "password" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chartServer serves a chart repository with web 1.0.0, 1.1.0 and 2.0.0.
func chartServer(t *testing.T) *repotest.Server {
	t.Helper()
	src := t.TempDir()
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		saveChart(t, src, "web", v)
	}
	srv, err := repotest.NewTempServerWithCleanup(t, filepath.Join(src, "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if err := srv.CreateIndex(); err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestAChartIsFetchedVerifiedAndCached(t *testing.T) {
	srv := chartServer(t)
	cache := t.TempDir()
	requests := &counting{}
	f := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, cache), Transport: requests})
	ch, err := f.Fetch(context.Background(), Ref{RepoURL: srv.URL(), Name: "web", Version: "1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Version != "1.1.0" || !strings.HasPrefix(ch.Digest, "sha256:") || !strings.HasPrefix(ch.Archive, cache) || ch.Resolved != "" {
		t.Errorf("chart: %+v", ch)
	}
	if _, err := os.Stat(ch.Archive); err != nil {
		t.Fatal(err)
	}
	before := requests.n.Load()
	if before != 2 {
		t.Errorf("%d requests, want the index and the archive", before)
	}
	// Another run, same cache: no request at all, and offline too.
	for _, opts := range []Options{{Allow: []string{srv.URL()}, Cache: testCache(t, cache), Transport: requests}, {Allow: []string{srv.URL()}, Cache: testCache(t, cache), Offline: true, Transport: requests}} {
		again, err := New(opts).Fetch(context.Background(), Ref{RepoURL: srv.URL(), Name: "web", Version: "1.1.0"})
		if err != nil || again.Digest != ch.Digest {
			t.Fatalf("cache hit: %+v %v", again, err)
		}
	}
	if requests.n.Load() != before {
		t.Errorf("a cached chart made %d requests", requests.n.Load()-before)
	}
	_, err = New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, cache), Offline: true, Transport: requests}).Fetch(context.Background(), Ref{RepoURL: srv.URL(), Name: "web", Version: "2.0.0"})
	if err == nil || !strings.Contains(err.Error(), "not in the chart cache") || requests.n.Load() != before {
		t.Errorf("offline miss: %v (%d requests)", err, requests.n.Load()-before)
	}
	// A corrupted cache entry is fetched again, online.
	if err := os.WriteFile(ch.Archive, []byte("corrupt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, err := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, cache)}).Fetch(context.Background(), Ref{RepoURL: srv.URL(), Name: "web", Version: "1.1.0"}); err != nil || again.Digest != ch.Digest {
		t.Errorf("corrupt cache: %+v %v", again, err)
	}
}

func TestATamperedChartIsRefused(t *testing.T) {
	srv := chartServer(t)
	// The archive changes after the index was written.
	saveChart(t, t.TempDir(), "web", "1.0.0")
	if err := os.WriteFile(filepath.Join(srv.Root(), "web-1.0.0.tgz"), []byte("not the indexed archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, t.TempDir())}).Fetch(context.Background(), Ref{RepoURL: srv.URL(), Name: "web", Version: "1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "does not match the digest its repository's index gives") {
		t.Errorf("tampered: %v", err)
	}
}

func TestOnlyAllowedRepositoriesAreReached(t *testing.T) {
	srv := chartServer(t)
	requests := &counting{}
	// A repository that is allowed but redirects to one that is not.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL()+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	f := New(Options{Allow: []string{redirector.URL + "/charts"}, Cache: testCache(t, t.TempDir()), Transport: requests})
	_, err := f.Fetch(context.Background(), Ref{RepoURL: redirector.URL + "/charts", Name: "web", Version: "1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "which charts.allow does not allow") {
		t.Errorf("redirect: %v", err)
	}
	for _, u := range []string{srv.URL(), redirector.URL + "/chartsmore", redirector.URL} {
		_, err := f.Fetch(context.Background(), Ref{RepoURL: u, Name: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "is not in charts.allow") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if requests.n.Load() != 1 { // the index request, whose redirect was refused
		t.Errorf("%d requests, want the one redirected", requests.n.Load())
	}
}

func TestARangeIsResolvedOnlyWhenAsked(t *testing.T) {
	srv := chartServer(t)
	ref := Ref{RepoURL: srv.URL(), Name: "web", Version: "^1.0.0"}
	if _, err := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, t.TempDir())}).Fetch(context.Background(), ref); err == nil || !strings.Contains(err.Error(), "--resolve-ranges") {
		t.Errorf("unpinned: %v", err)
	}
	ch, err := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, t.TempDir()), ResolveRanges: true}).Fetch(context.Background(), ref)
	if err != nil || ch.Version != "1.1.0" || ch.Resolved != "web ^1.0.0 resolved to 1.1.0" {
		t.Errorf("resolved: %+v %v", ch, err)
	}
}

func TestPrivateRepositoryCredentialsNeverReachOutput(t *testing.T) {
	srv := privateServer(t)
	reposFile := func(user, pass string) string {
		p := filepath.Join(t.TempDir(), "repositories.yaml")
		data := "apiVersion: \"\"\nrepositories:\n- name: private\n  url: " + srv.URL + "\n  username: " + user + "\n  password: " + pass + "\n"
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ref := Ref{RepoURL: srv.URL, Name: "web", Version: "1.0.0"}
	if _, err := New(Options{Allow: []string{srv.URL}, Cache: testCache(t, t.TempDir()), RepositoryConfig: reposFile("username", "password")}).Fetch(context.Background(), ref); err != nil {
		t.Fatalf("with the runner's credentials: %v", err)
	}
	_, err := New(Options{Allow: []string{srv.URL}, Cache: testCache(t, t.TempDir()), RepositoryConfig: reposFile("s3cr3t-user", "s3cr3t-pass")}).Fetch(context.Background(), ref)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong credentials: %v", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("credentials in the error: %v", err)
	}
	// A repository URL with userinfo in it is printed without.
	withUser := strings.Replace(srv.URL, "://", "://s3cr3t-user:s3cr3t-pass@", 1)
	_, err = New(Options{Cache: testCache(t, t.TempDir())}).Fetch(context.Background(), Ref{RepoURL: withUser, Name: "web", Version: "1.0.0"})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("userinfo in the error: %v", err)
	}
}

// A chart in an OCI registry (repotest's, with basic auth, the runner's credentials
// in a registry config.json): pulled with Helm's registry client, verified, cached,
// and a range resolved against the registry's tags.
func TestAChartIsPulledFromAnOCIRegistry(t *testing.T) {
	dir := t.TempDir()
	saveChart(t, dir, "oci-dependent-chart", "0.1.0")
	srv, err := repotest.NewOCIServer(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	runOCIServer(t, srv)
	repoURL := "oci://" + srv.RegistryURL + "/u/ocitestuser"
	opts := Options{Allow: []string{repoURL}, Cache: testCache(t, t.TempDir()), PlainHTTP: true, RegistryConfig: filepath.Join(dir, "config.json")}
	ch, err := New(opts).Fetch(context.Background(), Ref{RepoURL: repoURL, Name: "oci-dependent-chart", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Version != "0.1.0" || !strings.HasPrefix(ch.Digest, "sha256:") {
		t.Errorf("chart: %+v", ch)
	}
	opts.ResolveRanges = true
	ranged, err := New(opts).Fetch(context.Background(), Ref{RepoURL: repoURL, Name: "oci-dependent-chart", Version: "~0.1"})
	if err != nil || ranged.Version != "0.1.0" || ranged.Digest != ch.Digest || ranged.Resolved == "" {
		t.Errorf("range: %+v %v", ranged, err)
	}
	opts.Offline = true
	if cached, err := New(opts).Fetch(context.Background(), Ref{RepoURL: repoURL, Name: "oci-dependent-chart", Version: "0.1.0"}); err != nil || cached.Digest != ch.Digest {
		t.Errorf("offline: %+v %v", cached, err)
	}
}

// testCache is drift's cache directory at dir, its key beside it, as a run opens it.
func testCache(t *testing.T, dir string) *cachedir.Dir {
	t.Helper()
	d, err := cachedir.Open(cachedir.Options{Getenv: func(k string) string {
		if k == "DRIFT_CACHE_DIR" {
			return dir
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAChartCacheDriftDidNotWriteIsNotUsed: a record and an archive planted in the
// cache in drift's layout (a record naming the forged archive's true digest, as a
// change that commits a cache directory would write) are not a cached chart: offline
// the chart is not in the cache, online it is fetched and verified against the index.
func TestAChartCacheDriftDidNotWriteIsNotUsed(t *testing.T) {
	srv := chartServer(t)
	cache := t.TempDir()
	forged := []byte("a forged chart archive")
	sum := sha256.Sum256(forged)
	digest := hex.EncodeToString(sum[:])
	repo, err := repourl.ParseRepository(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string][]byte{
		recordPath(repo, "web", "1.1.0"): []byte(`{"digest":"` + digest + `"}`),
		archivePath(digest):              forged,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(cache, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cache, p), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ref := Ref{RepoURL: srv.URL(), Name: "web", Version: "1.1.0"}
	if ch, err := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, cache), Offline: true}).Fetch(context.Background(), ref); err == nil {
		t.Fatalf("offline, the planted chart was used: %+v", ch)
	}
	ch, err := New(Options{Allow: []string{srv.URL()}, Cache: testCache(t, cache)}).Fetch(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Digest == "sha256:"+digest {
		t.Errorf("the planted archive was used: %+v", ch)
	}
}

// runOCIServer runs repotest's registry once it listens: repotest's Run logs in the
// moment it starts serving in a goroutine, which a loaded machine loses to (the
// login's "connection refused"). Serving first and waiting for the port leaves Run's
// own start to find the address taken, which it ignores.
func runOCIServer(t *testing.T, srv *repotest.OCIServer) {
	t.Helper()
	go func() { _ = srv.ListenAndServe() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", srv.RegistryURL, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test registry at %s does not listen: %v", srv.RegistryURL, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Run(t)
}
