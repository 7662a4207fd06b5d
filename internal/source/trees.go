package source

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// gitObjects reads a repository's trees and blobs for every snapshot of it. Each tree is
// decoded once and kept by hash, so finding a path costs a map lookup per directory on
// the way instead of decoding those directories again (go-git's Tree.FindEntry does);
// reading a directory of n files is linear, not quadratic.
//
// go-git's object storage is not safe for concurrent use, so reading from it holds mu;
// looking paths up in trees already decoded does not, and targets rendering in
// parallel only wait for each other to read blobs and new trees.
type gitObjects struct {
	mu *sync.Mutex // the repository's lock
	s  storer.EncodedObjectStorer
	// lru is go-git's object cache under s (nil when the storage is not the
	// filesystem's).
	lru *cache.ObjectLRU

	cacheMu sync.RWMutex
	trees   map[plumbing.Hash]*gitTree
	sizes   map[plumbing.Hash]int64
	// decodes counts the trees decoded, for the test that holds reading to linear
	// time.
	decodes atomic.Int64
	// reads counts the blobs read from the storage, for the test that holds listing a
	// directory to reading none.
	reads atomic.Int64
}

// gitTree is one decoded tree: its entries in git's order, and by name.
type gitTree struct {
	entries []object.TreeEntry
	byName  map[string]int
}

func newGitObjects(s storer.EncodedObjectStorer, lru *cache.ObjectLRU, mu *sync.Mutex) *gitObjects {
	return &gitObjects{mu: mu, s: s, lru: lru, trees: map[plumbing.Hash]*gitTree{}, sizes: map[plumbing.Hash]int64{}}
}

// forget empties the caches: what is read later is read from the storage again.
func (g *gitObjects) forget() {
	g.mu.Lock()
	if g.lru != nil {
		g.lru.Clear()
	}
	g.mu.Unlock()
	g.cacheMu.Lock()
	g.trees, g.sizes = map[plumbing.Hash]*gitTree{}, map[plumbing.Hash]int64{}
	g.cacheMu.Unlock()
}

// tree returns the tree with hash h, decoding it the first time.
func (g *gitObjects) tree(h plumbing.Hash) (*gitTree, error) {
	g.cacheMu.RLock()
	t := g.trees[h]
	g.cacheMu.RUnlock()
	if t != nil {
		return t, nil
	}
	g.mu.Lock()
	decoded, err := object.GetTree(g.s, h)
	g.mu.Unlock()
	g.decodes.Add(1)
	if err != nil {
		return nil, err
	}
	t = &gitTree{entries: decoded.Entries, byName: make(map[string]int, len(decoded.Entries))}
	for i, e := range t.entries {
		t.byName[e.Name] = i
	}
	g.cacheMu.Lock()
	g.trees[h] = t
	g.cacheMu.Unlock()
	return t, nil
}

// entry returns the entry called name in t.
func (t *gitTree) entry(name string) (*object.TreeEntry, bool) {
	i, ok := t.byName[name]
	if !ok {
		return nil, false
	}
	return &t.entries[i], true
}

// blob reads the blob with hash h.
func (g *gitObjects) blob(h plumbing.Hash) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads.Add(1)
	obj, err := g.s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// size is the size of the blob with hash h (0 when it cannot be read: reading it
// then fails with the reason).
func (g *gitObjects) size(h plumbing.Hash) int64 {
	g.cacheMu.RLock()
	n, ok := g.sizes[h]
	g.cacheMu.RUnlock()
	if ok {
		return n
	}
	g.mu.Lock()
	// The whole object, not its header (EncodedObjectSize): the object cache keeps
	// it for the read that follows the size check, and a header costs go-git a look
	// for a loose object first, which made reading 10,000 files a quarter slower.
	obj, err := g.s.EncodedObject(plumbing.BlobObject, h)
	g.mu.Unlock()
	g.reads.Add(1)
	if err != nil {
		return 0
	}
	n = obj.Size()
	g.cacheMu.Lock()
	g.sizes[h] = n
	g.cacheMu.Unlock()
	return n
}
