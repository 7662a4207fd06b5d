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
)

// fetchHTTP fetches a chart from a chart repository: its index, then the archive,
// verified against the digest the index gives.
func (f *Fetcher) fetchHTTP(ctx context.Context, ref Ref) (*Chart, error) {
	base := strings.TrimSuffix(ref.RepoURL, "/")
	data, err := f.get(ctx, base+"/index.yaml", maxIndexBytes, ref.RepoURL)
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
		return nil, fmt.Errorf("%s: the index's URL %q: %v", ref, entry.URLs[0], err)
	}
	if !f.allowed(archiveURL) {
		return nil, fmt.Errorf("%s: the index points the archive at %s, which charts.allow does not allow", ref, redact(archiveURL))
	}
	archive, err := f.get(ctx, archiveURL, maxChartBytes, ref.RepoURL)
	if err != nil {
		return nil, fmt.Errorf("%s: the archive: %w", ref, err)
	}
	sum := sha256.Sum256(archive)
	if got := hex.EncodeToString(sum[:]); got != strings.TrimPrefix(strings.ToLower(entry.Digest), "sha256:") {
		return nil, fmt.Errorf("%s: the archive's sha256 %s does not match the digest its repository's index gives (%s): refused", ref, got, entry.Digest)
	}
	return f.store(ref.RepoURL, ref.Name, version, archive)
}

// get reads a URL within max bytes, with the runner's credentials for repoURL.
func (f *Fetcher) get(ctx context.Context, u string, max int64, repoURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not a URL", redact(u))
	}
	if user, pass, ok := f.credentials(repoURL); ok && sameHost(u, repoURL) {
		req.SetBasicAuth(user, pass)
	}
	resp, err := f.client().Do(req)
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
// repositories.yaml with that URL.
func (f *Fetcher) credentials(repoURL string) (user, pass string, ok bool) {
	if f.opts.RepositoryConfig == "" {
		return "", "", false
	}
	file, err := repo.LoadFile(f.opts.RepositoryConfig)
	if err != nil {
		return "", "", false
	}
	want, _ := normalize(repoURL)
	for _, e := range file.Repositories {
		if got, _ := normalize(e.URL); got == want && e.Username != "" {
			return e.Username, e.Password, true
		}
	}
	return "", "", false
}

func sameHost(a, b string) bool {
	pa, errA := url.Parse(a)
	pb, errB := url.Parse(b)
	return errA == nil && errB == nil && strings.EqualFold(pa.Host, pb.Host)
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
