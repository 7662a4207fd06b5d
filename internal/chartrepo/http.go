package chartrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// fetchHTTP fetches a chart from a chart repository: its index, then the archive,
// verified against the digest the index gives. loc is ref.RepoURL as repourl read
// it, and allowed.
func (f *Fetcher) fetchHTTP(ctx context.Context, ref Ref, loc repourl.URL) (*Chart, error) {
	cred := f.credentials(loc)
	// ref.RepoURL has no query or fragment (repourl refused them), so the index is
	// the path below it.
	base := strings.TrimSuffix(ref.RepoURL, "/")
	data, err := f.get(ctx, base+"/index.yaml", maxIndexBytes, cred)
	if err != nil {
		return nil, fmt.Errorf("%s: the repository's index: %w", ref, err)
	}
	var index repo.IndexFile
	if err := yaml.Unmarshal(data, &index); err != nil {
		return nil, fmt.Errorf("%s: the repository's index.yaml cannot be read: %v", ref, err)
	}
	entries := index.Entries[ref.Name]
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s: the repository has no chart %s", ref, ref.Name)
	}
	version := ref.Version
	if !isExact(version) {
		var all []string
		for _, e := range entries {
			all = append(all, e.Version)
		}
		if version, err = highest(ref.Version, all); err != nil {
			return nil, fmt.Errorf("%s: %v", ref, err)
		}
	}
	var entry *repo.ChartVersion
	for _, e := range entries {
		if e.Version == version || strings.TrimPrefix(e.Version, "v") == strings.TrimPrefix(version, "v") {
			entry = e
			break
		}
	}
	if entry == nil || len(entry.URLs) == 0 {
		return nil, fmt.Errorf("%s: the repository's index has no version %s of it", ref, version)
	}
	if entry.Digest == "" {
		return nil, fmt.Errorf("%s: the repository's index gives no digest for version %s, so the archive cannot be verified: drift does not use unverified charts", ref, version)
	}
	archiveURL, err := resolveURL(base+"/", entry.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("%s: the index's URL %s cannot be read", ref, redact(entry.URLs[0]))
	}
	archive, err := f.get(ctx, archiveURL, maxChartBytes, cred)
	if err != nil {
		return nil, fmt.Errorf("%s: the archive: %w", ref, err)
	}
	sum := sha256.Sum256(archive)
	if got := hex.EncodeToString(sum[:]); got != strings.TrimPrefix(strings.ToLower(entry.Digest), "sha256:") {
		return nil, fmt.Errorf("%s: the archive's sha256 %s does not match the digest its repository's index gives (%s): refused", ref, got, entry.Digest)
	}
	return f.store(loc, ref.Name, version, archive)
}

// credential is the runner's basic auth for one chart repository.
type credential struct {
	user, pass string
	// scope is the repository's URL: the credential goes only to URLs under it.
	scope repourl.URL
}

// get reads a URL within max bytes. The URL must be one drift does not refuse and
// the allow list allows; cred (nil: none) is sent only if the URL is under its
// repository.
func (f *Fetcher) get(ctx context.Context, u string, max int64, cred *credential) ([]byte, error) {
	target, err := repourl.ParseRequest(u)
	if err != nil {
		return nil, fmt.Errorf("GET %s is refused: %v", redact(u), err)
	}
	if !f.allowsRequest(target) {
		return nil, fmt.Errorf("%s is not in charts.allow of drift.yaml", redact(u))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL", redact(u))
	}
	var scope *repourl.URL
	if cred != nil && target.Under(cred.scope) {
		req.SetBasicAuth(cred.user, cred.pass)
		scope = &cred.scope
	}
	resp, err := f.client(scope).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("GET %s: %v", redact(ue.URL), ue.Err)
		}
		return nil, fmt.Errorf("GET %s failed", redact(u))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = ": give the runner credentials for it in a Helm repositories.yaml (--repository-config)"
		}
		return nil, fmt.Errorf("GET %s: %s%s", redact(u), resp.Status, hint)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", redact(u), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("GET %s: larger than %d MiB: refused", redact(u), max>>20)
	}
	return data, nil
}

// credentials are the runner's for a repository: the entry of its Helm
// repositories.yaml whose URL is the same (scheme, host, port and path, read by
// repourl); nil when there is none. Helm's pass_credentials_all is not honoured:
// the credential never goes to another repository, whatever the index says.
func (f *Fetcher) credentials(want repourl.URL) *credential {
	if f.opts.RepositoryConfig == "" {
		return nil
	}
	file, err := repo.LoadFile(f.opts.RepositoryConfig)
	if err != nil {
		return nil
	}
	for _, e := range file.Repositories {
		if got, err := repourl.ParseRepository(e.URL); err == nil && got.Equal(want) && e.Username != "" {
			return &credential{user: e.Username, pass: e.Password, scope: got}
		}
	}
	return nil
}

// resolveURL resolves an index entry's URL against the repository's.
func resolveURL(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	return b.ResolveReference(r).String(), nil
}
