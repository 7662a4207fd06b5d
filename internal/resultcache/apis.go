package resultcache

import (
	"github.com/drift-gitops/drift/internal/cachedir"
)

// APIs keeps each cluster's API discovery between runs (kube.DiscoveryKeeper), one
// file per API server address, apis/HASH.json, sealed with the cache's key so that
// a file anyone else wrote, or moved from another name, is no record.
type APIs struct {
	dir *cachedir.Dir
	// Notef says, once, that a record cannot be written.
	Notef func(format string, args ...any)
	noted bool
}

// OpenAPIs is the store of discovery records in the dry-run cache directory dir.
func OpenAPIs(dir *cachedir.Dir) *APIs { return &APIs{dir: dir} }

func apisPath(key string) string { return versionDir() + "/apis/" + hashOf(key) + ".json" }

// Load is what was kept under key.
func (a *APIs) Load(key string) ([]byte, bool) {
	data, err := a.dir.ReadSealed(apisPath(key))
	return data, err == nil
}

// Keep replaces what is kept under key.
func (a *APIs) Keep(key string, data []byte) {
	if err := a.dir.WriteSealed(apisPath(key), data); err != nil && a.Notef != nil && !a.noted {
		a.noted = true
		a.Notef("the API discovery of %s cannot be kept in %s (%v): the next run reads it from the server", key, a.dir.Path(), err)
	}
}
