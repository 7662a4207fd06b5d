package chartrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// record is what the cache knows of a repository's chart version.
type record struct {
	Digest string `json:"digest"`
}

// recordPath is where the record of (repository, chart, version) is kept; the
// repository is known by its canonical URL, so that one written with or without its
// default port shares the record.
func (f *Fetcher) recordPath(repo repourl.URL, name, version string) string {
	sum := sha256.Sum256([]byte(repo.String() + "\x00" + name + "\x00" + version))
	return filepath.Join(f.opts.CacheDir, "refs", hex.EncodeToString(sum[:])+".json")
}

func (f *Fetcher) archivePath(hexDigest string) string {
	return filepath.Join(f.opts.CacheDir, "sha256", hexDigest+".tgz")
}

// cached returns a chart version the cache holds, verified again.
func (f *Fetcher) cached(repo repourl.URL, name, version string) (*Chart, error) {
	data, err := os.ReadFile(f.recordPath(repo, name, version))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	path := f.archivePath(r.Digest)
	archive, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(archive)
	if hex.EncodeToString(sum[:]) != r.Digest {
		return nil, fmt.Errorf("the cached archive %s is corrupt", path)
	}
	return &Chart{Archive: path, Version: version, Digest: "sha256:" + r.Digest}, nil
}

// store keeps a verified archive and its record, each written whole (a temporary
// file renamed), so that runs side by side never read half a file.
func (f *Fetcher) store(repo repourl.URL, name, version string, archive []byte) (*Chart, error) {
	sum := sha256.Sum256(archive)
	digest := hex.EncodeToString(sum[:])
	path := f.archivePath(digest)
	if err := writeAtomic(path, archive); err != nil {
		return nil, fmt.Errorf("the chart cache: %v", err)
	}
	rec, _ := json.Marshal(record{Digest: digest})
	if err := writeAtomic(f.recordPath(repo, name, version), rec); err != nil {
		return nil, fmt.Errorf("the chart cache: %v", err)
	}
	return &Chart{Archive: path, Version: version, Digest: "sha256:" + digest}, nil
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
