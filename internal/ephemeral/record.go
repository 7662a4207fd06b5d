package ephemeral

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// binaries are what the ephemeral server runs.
var binaries = []string{"etcd", "kube-apiserver"}

// recordName is the file, beside the binaries, that says what drift installed: each
// binary's SHA-512 and where it came from, sealed with the cache's key (cachedir).
const recordName = "drift-assets.json"

// assetsRecord is what drift setup writes when it installs the binaries.
type assetsRecord struct {
	// SHA512 is each binary's hash, in hex.
	SHA512 map[string]string `json:"sha512"`
	// From says where they came from: the envtest release index (its archive verified
	// against the index's SHA-512) or a source build.
	From string `json:"from"`
}

// assetsCache is the directory of the binaries in drift's cache.
func assetsCache(cache *cachedir.Dir) *cachedir.Dir { return cache.Sub("assets") }

// verified checks that the binaries of version in the cache are what drift installed:
// its record sealed with the cache's key, and each binary (a regular file of the
// user's, reached through no symbolic link) hashing to the record's SHA-512. It
// returns their directory.
func verified(cache *cachedir.Dir, version string) (string, error) {
	assets := assetsCache(cache)
	data, err := assets.ReadSealed(version + "/" + recordName)
	if err != nil {
		return "", err
	}
	var rec assetsRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return "", fmt.Errorf("%s: %w", assets.Join(version+"/"+recordName), err)
	}
	for _, bin := range binaries {
		sum, err := hashOf(assets, version+"/"+bin)
		if err != nil {
			return "", err
		}
		if want := rec.SHA512[bin]; want == "" || sum != want {
			return "", fmt.Errorf("%s is not the binary drift installed (its SHA-512 differs from drift setup's record)", assets.Join(version+"/"+bin))
		}
	}
	return assets.Join(version), nil
}

// hashOf is the SHA-512 of the file rel of dir, in hex.
func hashOf(dir *cachedir.Dir, rel string) (string, error) {
	f, err := dir.Open(rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha512.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// install moves the binaries in from, a directory drift made and filled, into the
// cache as version's, and records them: hashed as they are moved in, the record
// written last, so that binaries without a record are never used.
func install(cache *cachedir.Dir, from, version, source string) (string, error) {
	assets := assetsCache(cache)
	if err := assets.MkdirAll(version); err != nil {
		return "", err
	}
	rec := assetsRecord{SHA512: map[string]string{}, From: source}
	for _, bin := range binaries {
		src := filepath.Join(from, bin)
		info, err := os.Lstat(src)
		if err != nil {
			return "", err
		}
		if !info.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file", src)
		}
		if err := os.Chmod(src, 0o755); err != nil {
			return "", err
		}
		if err := assets.Rename(src, version+"/"+bin); err != nil {
			return "", err
		}
		if rec.SHA512[bin], err = hashOf(assets, version+"/"+bin); err != nil {
			return "", err
		}
	}
	data, _ := json.Marshal(rec)
	if err := assets.WriteSealed(version+"/"+recordName, data); err != nil {
		return "", err
	}
	return assets.Join(version), nil
}
