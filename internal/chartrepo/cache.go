package chartrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// record is what the cache knows of a repository's chart version: the digest of the
// archive drift verified against the repository's index or the registry's manifest
// when it fetched it. It is sealed with the cache's key (cachedir), so a record drift
// did not write is no record.
type record struct {
	Digest string `json:"digest"`
}

// recordPath is where the record of (repository, chart, version) is kept, in the
// cache; the repository is known by its canonical URL, so that one written with or
// without its default port shares the record.
func recordPath(repo repourl.URL, name, version string) string {
	sum := sha256.Sum256([]byte(repo.String() + "\x00" + name + "\x00" + version))
	return "refs/" + hex.EncodeToString(sum[:]) + ".json"
}

func archivePath(hexDigest string) string {
	return "sha256/" + hexDigest + ".tgz"
}

// cached returns a chart version the cache holds: its record sealed by drift, its
// archive the digest the record names.
func (f *Fetcher) cached(repo repourl.URL, name, version string) (*Chart, error) {
	data, err := f.opts.Cache.ReadSealed(recordPath(repo, name, version))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if _, err := hex.DecodeString(r.Digest); err != nil || len(r.Digest) != 2*sha256.Size {
		return nil, fmt.Errorf("the chart cache's record of %s %s names no digest", name, version)
	}
	path := archivePath(r.Digest)
	archive, err := f.opts.Cache.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(archive)
	if hex.EncodeToString(sum[:]) != r.Digest {
		return nil, fmt.Errorf("the cached archive %s is corrupt", f.opts.Cache.Join(path))
	}
	return &Chart{Archive: f.opts.Cache.Join(path), Version: version, Digest: "sha256:" + r.Digest}, nil
}

// store keeps a verified archive and its record, each written whole (a temporary
// file renamed), so that runs side by side never read half a file.
func (f *Fetcher) store(repo repourl.URL, name, version string, archive []byte) (*Chart, error) {
	sum := sha256.Sum256(archive)
	digest := hex.EncodeToString(sum[:])
	path := archivePath(digest)
	if err := f.opts.Cache.WriteFile(path, archive); err != nil {
		return nil, fmt.Errorf("the chart cache: %v", err)
	}
	rec, _ := json.Marshal(record{Digest: digest})
	if err := f.opts.Cache.WriteSealed(recordPath(repo, name, version), rec); err != nil {
		return nil, fmt.Errorf("the chart cache: %v", err)
	}
	return &Chart{Archive: f.opts.Cache.Join(path), Version: version, Digest: "sha256:" + digest}, nil
}
