package render

import (
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"
)

// treeOf is a file system a commit's tree id names (as source's are), counting the
// directories read.
type treeOf struct {
	fstest.MapFS
	id    string
	mu    sync.Mutex
	reads int
}

func (t *treeOf) TreeID() string { return t.id }

func (t *treeOf) ReadDir(name string) ([]fs.DirEntry, error) {
	t.mu.Lock()
	t.reads++
	t.mu.Unlock()
	return t.MapFS.ReadDir(name)
}

// TestSourceIgnoresAreReadOncePerTree: the .sourceignore files of a commit's tree
// are found by walking it once, however many Flux targets of it a worker renders;
// another tree is walked again, and both keep their own patterns.
func TestSourceIgnoresAreReadOncePerTree(t *testing.T) {
	files := func(ignored string) fstest.MapFS {
		return fstest.MapFS{
			"apps/.sourceignore": {Data: []byte(ignored + "\n")},
			"apps/a.yaml":        {Data: []byte("a: 1\n")},
			"apps/b.yaml":        {Data: []byte("b: 1\n")},
			"apps/sub/c.yaml":    {Data: []byte("c: 1\n")},
		}
	}
	first := &treeOf{MapFS: files("a.yaml"), id: "tree-1-sourceignore-test"}
	exists := func(fsys fs.FS, name string) bool {
		_, err := fs.Stat(fluxSource(fsys, ""), name)
		return err == nil
	}
	if exists(first, "apps/a.yaml") || !exists(first, "apps/b.yaml") {
		t.Fatal("the first tree's .sourceignore is not applied")
	}
	walked := first.reads
	for range 5 {
		if exists(first, "apps/a.yaml") {
			t.Fatal("the first tree's .sourceignore is not applied again")
		}
	}
	if first.reads != walked {
		t.Errorf("the same tree was walked again: %d directory reads, then %d", walked, first.reads)
	}
	second := &treeOf{MapFS: files("b.yaml"), id: "tree-2-sourceignore-test"}
	if !exists(second, "apps/a.yaml") || exists(second, "apps/b.yaml") || second.reads == 0 {
		t.Errorf("another tree is not read as its own (%d directory reads)", second.reads)
	}
	// A file system no tree id names (the work tree) is walked every time.
	work := &countingDirs{MapFS: files("a.yaml")}
	exists(work, "apps/b.yaml")
	once := work.reads
	exists(work, "apps/b.yaml")
	if once == 0 || work.reads != 2*once {
		t.Errorf("the work tree was walked %d times' worth for two renders, %d for one", work.reads, once)
	}
}

type countingDirs struct {
	fstest.MapFS
	reads int
}

func (c *countingDirs) ReadDir(name string) ([]fs.DirEntry, error) {
	c.reads++
	return c.MapFS.ReadDir(name)
}
