package source

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// TestObjectIDIsGitsAndVouchesForNoLink: a path's id is the object git names it by
// (a file's blob, a directory's tree, the root's tree); a missing path has none; a
// path reached through a symbolic link is not vouched for (the link's id is not
// its target's); the work tree has no ids.
func TestObjectIDIsGitsAndVouchesForNoLink(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Write(map[string]string{"apps/a/cm.yaml": "a: 1\n"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(r.Dir, "apps", "link")); err != nil {
		t.Fatal(err)
	}
	commit, err := r.Commit("first")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot(commit)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "apps", "apps/a", "apps/a/cm.yaml"} {
		spec := commit + ":" + p
		if p == "." {
			spec = commit + "^{tree}"
		}
		want, err := r.Git("rev-parse", spec)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := snap.ObjectID(p); !ok || got != want {
			t.Errorf("%s: %q %v, git says %s", p, got, ok, want)
		}
	}
	if id, ok := snap.ObjectID("apps/missing/x.yaml"); !ok || id != "" {
		t.Errorf("a missing path: %q %v", id, ok)
	}
	for _, p := range []string{"apps/link", "apps/link/cm.yaml", "../x"} {
		if _, ok := snap.ObjectID(p); ok {
			t.Errorf("%s is vouched for", p)
		}
	}
	work, err := repo.Snapshot("")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := work.ObjectID("apps"); ok {
		t.Error("the work tree has an id")
	}
}
