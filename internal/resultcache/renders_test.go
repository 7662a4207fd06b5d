package resultcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderingsAreKeptPerBuildAndPrunedByName: a rendering comes back as it was
// kept, to the build that kept it only; another build's first
// record removes the first build's; a record not sealed with the cache's key is no
// record; prune removes renderings when the cache is too large, and nothing that
// is not drift's.
func TestRenderingsAreKeptPerBuildAndPrunedByName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := OpenRenders(cdir(t, dir), "build one")
	if err := one.Keep([]byte(`{"path":"apps"}`), []byte("rendering")); err != nil {
		t.Fatal(err)
	}
	if data, ok := one.Load([]byte(`{"path":"apps"}`)); !ok || string(data) != "rendering" {
		t.Errorf("Load: %q %v", data, ok)
	}
	if _, ok := one.Load([]byte(`{"path":"other"}`)); ok {
		t.Error("another spec's rendering was found")
	}
	if _, ok := OpenRenders(cdir(t, dir), "build two").Load([]byte(`{"path":"apps"}`)); ok {
		t.Error("another build read the rendering")
	}
	recs := files(t, filepath.Join(dir, versionDir(), "renders"))
	if len(recs) != 1 {
		t.Fatalf("records: %q", recs)
	}
	// A record written by anyone else (not sealed with the key) is no record.
	data, _ := os.ReadFile(recs[0])
	if err := os.WriteFile(recs[0], []byte(strings.Replace(string(data), "rendering", "planted!!", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := one.Load([]byte(`{"path":"apps"}`)); ok {
		t.Error("a changed record was read")
	}

	// Another build's first record removes the first build's; a file that is not
	// drift's stays.
	foreign := filepath.Join(filepath.Dir(recs[0]), "notes.txt")
	if err := os.WriteFile(foreign, []byte("not drift's"), 0o600); err != nil {
		t.Fatal(err)
	}
	two := OpenRenders(cdir(t, dir), "build two")
	if err := two.Keep([]byte(`{"path":"apps"}`), []byte("rendering two")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(recs[0]); !os.IsNotExist(err) {
		t.Errorf("the first build's record is still there: %v", err)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file drift did not write was removed: %v", err)
	}

	removed, _, err := Prune(cdir(t, dir), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := two.Load([]byte(`{"path":"apps"}`)); ok || removed != 1 {
		t.Errorf("prune to 0 bytes removed %d files, and the rendering is there: %v", removed, ok)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("prune removed a file drift did not write: %v", err)
	}
}
