package resultcache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// TestPruneRemovesOnlyWhatDriftWrote: prune follows no symbolic link (a version's
// directory, a pack, the cache directory itself pointing elsewhere), and leaves every
// file that does not have a name drift gives its files, in a format's directory too;
// what it wrote itself goes.
func TestPruneRemovesOnlyWhatDriftWrote(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	victim := filepath.Join(root, "victim")
	if err := os.MkdirAll(filepath.Join(victim, "v2"), 0o700); err != nil {
		t.Fatal(err)
	}
	precious := []string{filepath.Join(victim, "precious.pack"), filepath.Join(victim, "v2", "00000000000000000001-1.pack")}
	for _, p := range precious {
		if err := os.WriteFile(p, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "cache")
	run(t, dir, func(s *Store) { s.Put(baseKey(), Answer{Merged: obj(map[string]any{"a": "b"})}, Of()) })
	ours := files(t, dir)
	if len(ours) != 1 {
		t.Fatalf("stored %q", ours)
	}
	// Planted beside drift's own: links to the victim, and a file of another name in
	// another format's directory.
	for link, to := range map[string]string{"v1": victim, "v2": filepath.Join(victim, "v2"), filepath.Join(versionDir(), "00000000000000000002-2.pack"): precious[0]} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "v9"), 0o700); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "v9", "notes.txt")
	if err := os.WriteFile(foreign, []byte("not drift's"), 0o600); err != nil {
		t.Fatal(err)
	}
	removed, _, err := Prune(cdir(t, dir), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 1 {
		t.Errorf("removed %d files, want 1 (drift's pack)", removed)
	}
	for _, p := range append(precious, foreign) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(ours[0]); err == nil {
		t.Error("drift's own pack was not removed")
	}

	// The dry-run cache directory itself a link to the victim: refused, nothing removed.
	linked := filepath.Join(root, "linked")
	if err := os.Mkdir(linked, 0o700); err != nil {
		t.Fatal(err)
	}
	c := cdir(t, linked)
	if err := os.Symlink(victim, filepath.Join(linked, "dryrun")); err != nil {
		t.Fatal(err)
	}
	_, _, err = Prune(c.Sub("dryrun"), 0, 0)
	var refused *cachedir.Refused
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("prune through a link: %v, want a refusal", err)
	}
	for _, p := range precious {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
