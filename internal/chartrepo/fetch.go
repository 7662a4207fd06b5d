package chartrepo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
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
	// CacheDir holds the cache.
	CacheDir string
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
	mu   sync.Mutex
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
	return &Fetcher{opts: opts, inflight: map[Ref]*call{}}
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
	if !f.allowed(ref.RepoURL) {
		return nil, fmt.Errorf("%s: %s is not in charts.allow of drift.yaml: drift fetches charts only from repositories the base branch's drift.yaml allows (add it there; a pull request cannot)", ref, redact(ref.RepoURL))
	}
	exact := isExact(ref.Version)
	if !exact && !f.opts.ResolveRanges {
		return nil, fmt.Errorf("%s: version %q is not an exact version: pin it, or pass --resolve-ranges to take the highest version it allows (the report says which)", ref, ref.Version)
	}
	if exact {
		if ch, err := f.cached(ref.RepoURL, ref.Name, ref.Version); err == nil {
			return ch, nil
		}
	}
	if f.opts.Offline {
		if !exact {
			return nil, fmt.Errorf("%s: --offline cannot resolve the range %q without the repository: pin the version", ref, ref.Version)
		}
		return nil, fmt.Errorf("%s is not in the chart cache (%s): run once without --offline to fetch it", ref, f.opts.CacheDir)
	}
	var ch *Chart
	var err error
	if strings.HasPrefix(ref.RepoURL, "oci://") {
		ch, err = f.fetchOCI(ctx, ref)
	} else {
		ch, err = f.fetchHTTP(ctx, ref)
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

// allowed reports whether u is one of the allowed repository URLs or below one, at
// a path boundary; scheme and host compare case-insensitively, userinfo is ignored.
func (f *Fetcher) allowed(u string) bool {
	nu, err := normalize(u)
	if err != nil {
		return false
	}
	for _, a := range f.opts.Allow {
		na, err := normalize(a)
		if err != nil {
			continue
		}
		if nu == na || strings.HasPrefix(nu, na+"/") {
			return true
		}
	}
	return false
}

func normalize(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "", errors.New("not a URL")
	}
	return strings.ToLower(p.Scheme) + "://" + strings.ToLower(p.Host) + strings.TrimSuffix(p.EscapedPath(), "/"), nil
}

// redact is a URL without its userinfo and query, for messages.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unreadable URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// client is the HTTP client for a fetch: redirects only to allowed places.
func (f *Fetcher) client() *http.Client {
	return &http.Client{
		Transport: f.opts.Transport,
		Timeout:   2 * time.Minute,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if !f.allowed(req.URL.String()) {
				return fmt.Errorf("redirected to %s, which charts.allow does not allow", req.URL.Host)
			}
			return nil
		},
	}
}
