package chartrepo

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/repo"
	"helm.sh/helm/v3/pkg/repo/repotest"
)

// The attacks on charts.allow and on the runner's credentials, each written as the
// attack: a pull request names a chart's repository, the base's drift.yaml allows
// some, and the runner's Helm configuration holds credentials for some.

// recorder is a chart server that records every request it gets: its raw request
// URI and the Authorization header it carried.
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	uris  []string
	auths []string
}

func (r *recorder) record(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uris = append(r.uris, req.RequestURI)
	r.auths = append(r.auths, req.Header.Get("Authorization"))
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.uris...)
}

// authorizations are the Authorization headers of the requests whose URI starts
// with prefix ("" for all), the empty ones included.
func (r *recorder) authorizations(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for i, u := range r.uris {
		if strings.HasPrefix(u, prefix) {
			out = append(out, r.auths[i])
		}
	}
	return out
}

// newRecorder serves handler, recording each request first.
func newRecorder(t *testing.T, handler http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.record(req)
		handler(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

// repoDir writes a chart repository of web 1.0.0 into dir: the archive and an index
// whose URL for it is url ("" for the archive's name, relative).
func repoDir(t *testing.T, dir, archiveURL string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	saveChart(t, dir, "web", "1.0.0")
	index, err := repo.IndexDirectory(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if archiveURL != "" {
		index.Entries["web"][0].URLs = []string{archiveURL}
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// normalizing serves the files under root at their path as a server that
// normalizes it does: unescaped, then cleaned, so /allowed/%2e%2e/other/index.yaml
// is /other/index.yaml.
func normalizing(root string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path.Clean("/"+r.URL.Path))))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}
}

// reposFile is a Helm repositories.yaml giving username / password to each URL.
func reposFile(t *testing.T, urls ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: \"\"\nrepositories:\n")
	for i, u := range urls {
		fmt.Fprintf(&b, "- name: r%d\n  url: %s\n  username: username\n  password: password\n", i, u)
	}
	p := filepath.Join(t.TempDir(), "repositories.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantAuth is the header of username / password.
var wantAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte("username:password"))

// TestAPathThatEscapesItsAllowedPrefixIsRefusedUnsent: charts.allow names
// /allowed of a server that normalizes paths and also serves /other. Every way of
// writing a path out of /allowed that such a server would follow is refused, with
// the reason, before any request; so is an index pointing its archive out that way;
// a repository below /allowed is fetched.
func TestAPathThatEscapesItsAllowedPrefixIsRefusedUnsent(t *testing.T) {
	root := t.TempDir()
	repoDir(t, filepath.Join(root, "other"), "")
	repoDir(t, filepath.Join(root, "allowed", "sub"), "")
	// An allowed repository whose index points the archive at /other, encoded.
	repoDir(t, filepath.Join(root, "allowed", "tricky"), "%2e%2e/%2e%2e/other/web-1.0.0.tgz")
	srv := newRecorder(t, normalizing(root))
	f := New(Options{Allow: []string{srv.URL + "/allowed"}, Cache: testCache(t, t.TempDir())})
	fetch := func(repoURL string) error {
		_, err := f.Fetch(context.Background(), Ref{RepoURL: repoURL, Name: "web", Version: "1.0.0"})
		return err
	}

	for _, c := range []struct{ path, says string }{
		{"/allowed/%2e%2e/other", "encoded dot (%2e)"},
		{"/allowed/%2E%2E/other", "encoded dot (%2E)"},
		{"/allowed/.%2e/other", "encoded dot (%2e)"},
		{"/allowed/%2e./other", "encoded dot (%2e)"},
		{"/allowed%2f..%2fother", "encoded separator (%2f)"},
		{"/allowed/..%2Fother", "encoded separator (%2F)"},
		{"/allowed/..%5cother", "encoded separator (%5c)"},
		{"/allowed/%252e%252e/other", "encoded percent sign (%25)"},
		{"/allowed/../other", `".." segment`},
		{"/allowed/..;/other", `"..;" segment`},
		{"/allowed/./../other", `"." segment`},
		{"/allowed//../other", "empty segment"},
		{`/allowed\..\other`, "backslash"},
	} {
		err := fetch(srv.URL + c.path)
		if err == nil || !strings.Contains(err.Error(), "the repository URL is refused: ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want it refused saying %q", c.path, err, c.says)
		}
	}
	userinfo := strings.Replace(srv.URL, "://", "://robot:s3cr3t@", 1) + "/allowed"
	if err := fetch(userinfo); err == nil || !strings.Contains(err.Error(), "has userinfo") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("userinfo: %v", err)
	}
	if got := srv.requests(); len(got) != 0 {
		t.Fatalf("refused URLs reached the server: %q", got)
	}

	// The index of an allowed repository points the archive out of it, encoded.
	err := fetch(srv.URL + "/allowed/tricky")
	if err == nil || !strings.Contains(err.Error(), "encoded dot (%2e)") {
		t.Errorf("an index pointing out: %v", err)
	}
	if got := srv.requests(); len(got) != 1 || got[0] != "/allowed/tricky/index.yaml" {
		t.Errorf("requests %q, want the index alone", got)
	}

	if err := fetch(srv.URL + "/allowed/sub"); err != nil {
		t.Errorf("a repository below the allowed one: %v", err)
	}
	if err := fetch(srv.URL + "/other"); err == nil || !strings.Contains(err.Error(), "is not in charts.allow") {
		t.Errorf("/other: %v", err)
	}
}

// TestAnotherPortIsAnotherRepository: an entry without a port allows the scheme's
// default port only, and one with a port that port only, on the same host.
func TestAnotherPortIsAnotherRepository(t *testing.T) {
	root := t.TempDir()
	repoDir(t, root, "")
	allowed := newRecorder(t, normalizing(root))
	other := newRecorder(t, normalizing(root))
	host := strings.TrimPrefix(allowed.URL, "http://")
	hostname := strings.Split(host, ":")[0]
	for _, allow := range []string{allowed.URL, "http://" + hostname} {
		f := New(Options{Allow: []string{allow}, Cache: testCache(t, t.TempDir())})
		_, err := f.Fetch(context.Background(), Ref{RepoURL: other.URL, Name: "web", Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), "is not in charts.allow") {
			t.Errorf("allow %s, fetch %s: %v", allow, other.URL, err)
		}
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the other port got %q", got)
	}
	if _, err := New(Options{Allow: []string{allowed.URL}, Cache: testCache(t, t.TempDir())}).Fetch(context.Background(), Ref{RepoURL: allowed.URL, Name: "web", Version: "1.0.0"}); err != nil {
		t.Errorf("the allowed port: %v", err)
	}
}

// TestRepositoryCredentialsGoToTheirRepositoryOnly: the runner holds credentials for
// repositories of server A. Both A and B (the same host, another port) are allowed.
// A's credentials reach A, also after a redirect within the repository; they reach
// neither B after A answers 302 (net/http would forward them: the host name is the
// same), nor B asked directly, nor another path of A an index points the archive
// at.
func TestRepositoryCredentialsGoToTheirRepositoryOnly(t *testing.T) {
	bRoot := t.TempDir()
	repoDir(t, bRoot, "")
	b := newRecorder(t, normalizing(bRoot))

	aRoot := t.TempDir()
	repoDir(t, filepath.Join(aRoot, "charts"), "")
	repoDir(t, filepath.Join(aRoot, "moved", "new"), "")
	repoDir(t, filepath.Join(aRoot, "elsewhere"), "")
	var a *recorder
	a = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/elsewhere/") { // another repository, public
			normalizing(aRoot)(w, r)
			return
		}
		if r.Header.Get("Authorization") != wantAuth {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			http.Redirect(w, r, b.URL+strings.TrimPrefix(r.URL.Path, "/redirect"), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/moved/") && !strings.HasPrefix(r.URL.Path, "/moved/new/"):
			http.Redirect(w, r, a.URL+"/moved/new"+strings.TrimPrefix(r.URL.Path, "/moved"), http.StatusFound)
		case r.URL.Path == "/pointing/index.yaml":
			// An index of A whose archive is in A's other repository: that
			// repository's own index, its archive's URL made absolute (a chart packaged
			// again here could have another mtime, and so another digest).
			index, err := repo.LoadIndexFile(filepath.Join(aRoot, "elsewhere", "index.yaml"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			index.Entries["web"][0].URLs = []string{a.URL + "/elsewhere/web-1.0.0.tgz"}
			file := filepath.Join(t.TempDir(), "index.yaml")
			if err := index.WriteFile(file, 0o644); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			http.ServeFile(w, r, file)
		default:
			normalizing(aRoot)(w, r)
		}
	})
	creds := reposFile(t, a.URL+"/charts", a.URL+"/redirect", a.URL+"/moved", a.URL+"/pointing")
	f := New(Options{Allow: []string{a.URL, b.URL}, Cache: testCache(t, t.TempDir()), RepositoryConfig: creds})
	fetch := func(repoURL string) error {
		_, err := f.Fetch(context.Background(), Ref{RepoURL: repoURL, Name: "web", Version: "1.0.0"})
		return err
	}

	if err := fetch(a.URL + "/charts"); err != nil {
		t.Fatalf("A with its credentials: %v", err)
	}
	if got := a.authorizations("/charts/"); len(got) != 2 || got[0] != wantAuth || got[1] != wantAuth {
		t.Errorf("A got %q, want the credentials on the index and the archive", got)
	}
	if err := fetch(a.URL + "/moved"); err != nil {
		t.Errorf("a redirect within the repository: %v", err)
	}

	// A answers 302 to B, which serves without credentials.
	if err := fetch(a.URL + "/redirect"); err != nil {
		t.Fatalf("redirected to B: %v", err)
	}
	if got := a.authorizations("/redirect/"); len(got) != 2 || got[0] != wantAuth {
		t.Errorf("A got %q, want the credentials before each redirect", got)
	}
	// B asked directly.
	if _, err := New(Options{Allow: []string{a.URL, b.URL}, Cache: testCache(t, t.TempDir()), RepositoryConfig: creds}).
		Fetch(context.Background(), Ref{RepoURL: b.URL, Name: "web", Version: "1.0.0"}); err != nil {
		t.Fatalf("B directly: %v", err)
	}
	if got := b.authorizations(""); len(got) != 4 || strings.Join(got, "") != "" {
		t.Errorf("B got Authorization %q in %q, want none in 4 requests", got, b.requests())
	}

	// A's index points the archive at A's other repository.
	if err := fetch(a.URL + "/pointing"); err != nil {
		t.Fatalf("an archive elsewhere on A: %v", err)
	}
	if got := a.authorizations("/elsewhere/"); len(got) != 1 || got[0] != "" {
		t.Errorf("A's other repository got Authorization %q, want none", got)
	}
}

// TestRegistryCredentialsStayWithTheirRegistry: the runner holds credentials for
// registry A (a front of Helm's test registry). A sends blob downloads on, with 302,
// to storage B on the same host and another port, which charts.allow allows, and B
// redirects once more within itself: the chart is pulled with A's credentials sent
// to A, and B gets none (the registry client drops them when a hop changes origin,
// but net/http copies them again at B's own hop). A registry C on another port of
// the same host, asked directly, gets none either.
func TestRegistryCredentialsStayWithTheirRegistry(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials but the test's
	dir := t.TempDir()
	saveChart(t, dir, "oci-dependent-chart", "0.1.0")
	reg, err := repotest.NewOCIServer(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	runOCIServer(t, reg)
	registry, err := url.Parse("http://" + reg.RegistryURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(registry)
	// B reads the registry's blobs with its own access, as storage would, after one
	// more redirect of its own: the Authorization header net/http copies again at
	// every hop must not come back once the chain left A.
	var b *recorder
	b = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.RequestURI(), "/hop"); ok {
			http.Redirect(w, r, b.URL+rest, http.StatusFound)
			return
		}
		r.Header.Set("Authorization", wantAuth)
		proxy.ServeHTTP(w, r)
	})
	a := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") && r.Header.Get("Authorization") != "" {
			http.Redirect(w, r, b.URL+"/hop"+r.URL.RequestURI(), http.StatusFound)
			return
		}
		proxy.ServeHTTP(w, r)
	})
	c := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="c"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	aHost := strings.TrimPrefix(a.URL, "http://")
	config := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(config, []byte(`{"auths":{"`+aHost+`":{"auth":"`+base64.StdEncoding.EncodeToString([]byte("username:password"))+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	aRepo := "oci://" + aHost + "/u/ocitestuser"
	cRepo := "oci://" + strings.TrimPrefix(c.URL, "http://") + "/u/ocitestuser"
	opts := Options{Allow: []string{aRepo, b.URL, cRepo}, Cache: testCache(t, t.TempDir()), PlainHTTP: true, RegistryConfig: config}

	ch, err := New(opts).Fetch(context.Background(), Ref{RepoURL: aRepo, Name: "oci-dependent-chart", Version: "0.1.0"})
	if err != nil {
		t.Fatalf("pull through A: %v", err)
	}
	if !strings.HasPrefix(ch.Digest, "sha256:") {
		t.Errorf("chart: %+v", ch)
	}
	sent := 0
	for _, h := range a.authorizations("/v2/u/ocitestuser/") {
		if h == wantAuth {
			sent++
		}
	}
	if sent == 0 {
		t.Errorf("A never got its credentials: %q", a.authorizations(""))
	}
	if got := b.authorizations(""); len(got) == 0 || strings.Join(got, "") != "" {
		t.Errorf("storage B got Authorization %q in %q, want blob requests without any", got, b.requests())
	}

	_, err = New(opts).Fetch(context.Background(), Ref{RepoURL: cRepo, Name: "oci-dependent-chart", Version: "0.1.0"})
	if err == nil {
		t.Fatal("registry C served without credentials")
	}
	if got := c.authorizations(""); len(got) == 0 || strings.Join(got, "") != "" {
		t.Errorf("registry C got Authorization %q, want requests without any", got)
	}
	if strings.Contains(err.Error(), "password") || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte("username:password"))) {
		t.Errorf("credentials in the error: %v", err)
	}
}

// TestARegistryPathOutsideItsAllowedPrefixIsRefused: a chart's name is part of its
// registry path, and is checked with it.
func TestARegistryPathOutsideItsAllowedPrefixIsRefused(t *testing.T) {
	requests := &counting{}
	f := New(Options{Allow: []string{"oci://registry.example:5000/allowed"}, Cache: testCache(t, t.TempDir()), Transport: requests})
	for _, c := range []struct{ repoURL, name, says string }{
		{"oci://registry.example:5000/allowed", "../other/chart", `".." segment`},
		{"oci://registry.example:5000/allowed", "%2e%2e/other", "encoded dot"},
		{"oci://registry.example:5000/allowed/%2e%2e/other", "chart", "encoded dot"},
		{"oci://registry.example:5000/allowed", "Chart", `"Chart", which is not part of an OCI repository name`},
		{"oci://registry.example:5000/allowed", "chart:evil", `"chart:evil", which is not part of an OCI repository name`},
		{"oci://registry.example:5000/allowed", "chart?x", "query or fragment"},
		{"oci://registry.example/allowed", "chart", "is not in charts.allow"},
		{"oci://registry.example:5001/allowed", "chart", "is not in charts.allow"},
	} {
		_, err := f.Fetch(context.Background(), Ref{RepoURL: c.repoURL, Name: c.name, Version: "1.0.0"})
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %s: %v, want %q", c.repoURL, c.name, err, c.says)
		}
	}
	if requests.n.Load() != 0 {
		t.Errorf("%d requests", requests.n.Load())
	}
}
