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

// TestListingIDFollowsWhatAListingReads: a directory's listing id changes when a
// file in it is edited, added, removed or renamed, or a subdirectory added, but not
// when a file deeper down is edited; a file has none, a path through a link is not
// vouched for.
func TestListingIDFollowsWhatAListingReads(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	listing := func(files map[string]string, name string) string {
		t.Helper()
		commit, err := r.CommitFiles(files, "step")
		if err != nil {
			t.Fatal(err)
		}
		snap, err := repo.Snapshot(commit)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := snap.InputID(name, ReadListing)
		if !ok {
			t.Fatalf("%s is not vouched for", name)
		}
		return id
	}
	first := listing(map[string]string{"apps/kustomization.yaml": "resources: [a]\n", "apps/a/cm.yaml": "a: 1\n"}, "apps")
	if first == "" {
		t.Fatal("a directory has no listing id")
	}
	if got := listing(map[string]string{"apps/a/cm.yaml": "a: 2\n"}, "apps"); got != first {
		t.Error("a file deeper down changed the listing")
	}
	steps := []struct {
		what  string
		files map[string]string
	}{
		{"a file in it edited", map[string]string{"apps/kustomization.yaml": "resources: [a, b]\n"}},
		{"a file added", map[string]string{"apps/extra.yaml": "x: 1\n"}},
		{"a subdirectory added", map[string]string{"apps/b/cm.yaml": "b: 1\n"}},
		{"a file removed", map[string]string{"apps/extra.yaml": ""}},
	}
	seen := map[string]string{first: "the first commit"}
	for _, s := range steps {
		got := listing(s.files, "apps")
		if was, ok := seen[got]; ok {
			t.Errorf("%s: the listing is the one of %s", s.what, was)
		}
		seen[got] = s.what
	}
	commit, err := r.Git("rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot(commit)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := snap.InputID("apps/kustomization.yaml", ReadListing); !ok || id != "" {
		t.Errorf("a file: %q %v", id, ok)
	}
	if id, ok := snap.InputID("apps/missing", ReadListing); !ok || id != "" {
		t.Errorf("a missing directory: %q %v", id, ok)
	}
	// A probe sees a file's content and that a directory is one.
	blob, err := r.Git("rev-parse", commit+":apps/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"apps/kustomization.yaml": blob, "apps/b": "dir", "apps/none": ""} {
		if id, ok := snap.InputID(p, ReadEntry); !ok || id != want {
			t.Errorf("a probe of %s: %q %v, want %q", p, id, ok, want)
		}
	}
	// A tree read whole is its git object: any change under it counts.
	want, err := r.Git("rev-parse", commit+":apps")
	if err != nil {
		t.Fatal(err)
	}
	if tree, ok := snap.InputID("apps", ReadTree); !ok || tree != want {
		t.Errorf("the whole tree of apps: %q %v, git says %s", tree, ok, want)
	}
}
