package chartrepo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// Limits on what is read from a repository.
const (
	maxIndexBytes = 32 << 20
	maxChartBytes = 20 << 20
)

// Ref names a chart: RepoURL is https://… (a chart repository) or oci://… (a
// registry, the chart at RepoURL/Name); Version is exact, or a semver range.
type Ref struct {
	RepoURL, Name, Version string
}

// String names the chart in messages, without credentials.
func (r Ref) String() string {
	return fmt.Sprintf("chart %s %s from %s", r.Name, r.Version, redact(r.RepoURL))
}

// Chart is a fetched, verified chart archive.
type Chart struct {
	// Archive is the path of the archive in the cache.
	Archive string
	// Version is the exact version; Digest the archive's "sha256:<hex>".
	Version, Digest string
	// Resolved says what a range resolved to ("" for an exact version).
	Resolved string
}

// Options say what may be fetched and how.
type Options struct {
	// Allow lists the repository URLs charts may come from.
	Allow []string
	// Cache holds the cache: drift's cache directory's charts (cachedir).
	Cache *cachedir.Dir
	// Offline serves from the cache alone.
	Offline bool
	// ResolveRanges lets a version range resolve to the highest version matching it.
	ResolveRanges bool
	// RepositoryConfig and RegistryConfig are the runner's Helm repositories.yaml and
	// registry config.json (credentials); "" for none.
	RepositoryConfig, RegistryConfig string
	// PlainHTTP talks to OCI registries over plain HTTP (local test registries).
	PlainHTTP bool
	// Transport carries the requests (nil: http.DefaultTransport).
	Transport http.RoundTripper
}

// Fetcher fetches charts under Options; it is safe for concurrent use.
type Fetcher struct {
	opts Options
	// allow is opts.Allow read by repourl; entries it refuses allow nothing.
	allow []repourl.URL
	mu    sync.Mutex
	// inflight fetches each chart once, however many targets ask.
	inflight map[Ref]*call
}

type call struct {
	done  chan struct{}
	chart *Chart
	err   error
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	f := &Fetcher{opts: opts, inflight: map[Ref]*call{}}
	for _, a := range opts.Allow {
		if u, err := repourl.ParseRepository(a); err == nil {
			f.allow = append(f.allow, u)
		}
	}
	return f
}

// Fetch returns the verified archive of a chart, from the cache or its repository.
func (f *Fetcher) Fetch(ctx context.Context, ref Ref) (*Chart, error) {
	f.mu.Lock()
	c, ok := f.inflight[ref]
	if !ok {
		c = &call{done: make(chan struct{})}
		f.inflight[ref] = c
		go func() {
			defer close(c.done)
			c.chart, c.err = f.fetch(ctx, ref)
		}()
	}
	f.mu.Unlock()
	select {
	case <-c.done:
		return c.chart, c.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (f *Fetcher) fetch(ctx context.Context, ref Ref) (*Chart, error) {
	repo, err := repourl.ParseRepository(ref.RepoURL)
	if err != nil {
		return nil, fmt.Errorf("%s: the repository URL is refused: %v", ref, err)
	}
	// A registry's chart is at the repository's path and its name: both are checked.
	loc := repo
	if repo.Scheme == "oci" {
		if loc, err = ociLocation(ref); err != nil {
			return nil, err
		}
	}
	if !f.allows(loc) {
		return nil, fmt.Errorf("%s: %s is not in charts.allow of drift.yaml: drift fetches charts only from repositories the base branch's drift.yaml allows (add it there; a pull request cannot)", ref, redact(ref.RepoURL))
	}
	exact := isExact(ref.Version)
	if !exact && !f.opts.ResolveRanges {
		return nil, fmt.Errorf("%s: version %q is not an exact version: pin it, or pass --resolve-ranges to take the highest version it allows (the report says which)", ref, ref.Version)
	}
	if exact {
		if ch, err := f.cached(repo, ref.Name, ref.Version); err == nil {
			return ch, nil
		}
	}
	if f.opts.Offline {
		if !exact {
			return nil, fmt.Errorf("%s: --offline cannot resolve the range %q without the repository: pin the version", ref, ref.Version)
		}
		return nil, fmt.Errorf("%s is not in the chart cache (%s): run once without --offline to fetch it", ref, f.opts.Cache.Path())
	}
	var ch *Chart
	if repo.Scheme == "oci" {
		ch, err = f.fetchOCI(ctx, ref, loc)
	} else {
		ch, err = f.fetchHTTP(ctx, ref, repo)
	}
	if err != nil {
		return nil, err
	}
	if !exact {
		ch.Resolved = fmt.Sprintf("%s %s resolved to %s", ref.Name, ref.Version, ch.Version)
	}
	return ch, nil
}

// isExact reports whether v is one exact semver version.
func isExact(v string) bool {
	_, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	return err == nil
}

// highest is the highest of versions that constraint allows.
func highest(constraint string, versions []string) (string, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("version %q is neither a version nor a range: %v", constraint, err)
	}
	var best *semver.Version
	bestRaw := ""
	for _, raw := range versions {
		v, err := semver.NewVersion(raw)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestRaw = v, raw
		}
	}
	if best == nil {
		return "", fmt.Errorf("no version matches %q", constraint)
	}
	return bestRaw, nil
}

// allows reports whether a chart's repository location is under an entry of the
// allow list of its kind (an oci:// entry for a registry, an http(s):// entry for a
// chart repository): the same scheme, host and port, and the entry's path segments
// the first of the location's.
func (f *Fetcher) allows(loc repourl.URL) bool {
	for _, a := range f.allow {
		if loc.Under(a) {
			return true
		}
	}
	return false
}

// allowsRequest reports whether a request's URL (an archive's, a redirect's target)
// is under an entry of the allow list: an http(s):// entry as it is, an oci:// entry
// as its registry's API for the repositories under its path
// (https://host:port/v2/path/…).
func (f *Fetcher) allowsRequest(u repourl.URL) bool {
	for _, a := range f.allow {
		if a.Scheme == "oci" {
			a = registryAPI(a, f.opts.PlainHTTP)
		}
		if u.Under(a) {
			return true
		}
	}
	return false
}

// redact is a URL without its userinfo and query, for messages.
func redact(u string) string {
	return repourl.Redact(u)
}

// client is the HTTP client of a fetch. It follows a redirect only to a URL drift
// does not refuse and the allow list allows, and sends the Authorization header of
// the first request on only while every hop stays under scope, the repository the
// credentials belong to (nil: none): net/http itself would send it to any port of
// the same host name, and to its subdomains.
func (f *Fetcher) client(scope *repourl.URL) *http.Client {
	return &http.Client{
		Transport: f.opts.Transport,
		Timeout:   2 * time.Minute,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			target, err := repourl.ParseRequest(req.URL.String())
			if err != nil {
				return fmt.Errorf("redirected to %s, which drift refuses: %v", redact(req.URL.String()), err)
			}
			if !f.allowsRequest(target) {
				return fmt.Errorf("redirected to %s, which charts.allow does not allow", redact(req.URL.String()))
			}
			if !within(scope, req, via) {
				req.Header.Del("Authorization")
			}
			return nil
		},
	}
}

// within reports whether the redirected request req and every request before it
// are under scope.
func within(scope *repourl.URL, req *http.Request, via []*http.Request) bool {
	if scope == nil {
		return false
	}
	for _, r := range append(via, req) {
		u, err := repourl.ParseRequest(r.URL.String())
		if err != nil || !u.Under(*scope) {
			return false
		}
	}
	return true
}
