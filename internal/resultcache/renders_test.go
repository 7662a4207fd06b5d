package resultcache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/render/rendercache"
)

// TestRenderingsAreKeptPerBuildAndPrunedByName: a rendering comes back as it was
// kept, to the build that kept it only; a run's renderings are one file; a record
// not sealed with the cache's key is no record; another build's first pack removes
// the first build's, and the renderings drift kept one file each before packs;
// prune removes renderings when the cache is too large, and nothing that is not
// drift's.
func TestRenderingsAreKeptPerBuildAndPrunedByName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := OpenRenders(cdir(t, dir), "build one")
	if err := one.Keep([]rendercache.Record{{Spec: []byte(`{"path":"apps"}`), Data: []byte("rendering")}, {Spec: []byte(`{"path":"infra"}`), Data: []byte("infra's")}}); err != nil {
		t.Fatal(err)
	}
	if data, ok := OpenRenders(cdir(t, dir), "build one").Load([]byte(`{"path":"apps"}`)); !ok || string(data) != "rendering" {
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
		t.Fatalf("a run's renderings are not one file: %q", recs)
	}
	// A record written by anyone else (not sealed with the key) is no record.
	data, _ := os.ReadFile(recs[0])
	if err := os.WriteFile(recs[0], bytes.Replace(data, []byte("rendering"), []byte("planted!!"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := OpenRenders(cdir(t, dir), "build one").Load([]byte(`{"path":"apps"}`)); ok {
		t.Errorf("a changed record was read: %q", got)
	}

	// Another build's first pack removes the first build's, and its renderings as
	// drift kept them one file each; a file that is not drift's stays.
	old := filepath.Join(filepath.Dir(recs[0]), "ab", "ab"+fmt.Sprintf("%062d", 7))
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("a rendering of before"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(filepath.Dir(recs[0]), "notes.txt")
	if err := os.WriteFile(foreign, []byte("not drift's"), 0o600); err != nil {
		t.Fatal(err)
	}
	two := OpenRenders(cdir(t, dir), "build two")
	if err := two.Keep([]rendercache.Record{{Spec: []byte(`{"path":"apps"}`), Data: []byte("rendering two")}}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{recs[0], old} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("the first build's %s is still there: %v", gone, err)
		}
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file drift did not write was removed: %v", err)
	}

	removed, _, err := Prune(cdir(t, dir), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := OpenRenders(cdir(t, dir), "build two").Load([]byte(`{"path":"apps"}`)); ok || removed != 1 {
		t.Errorf("prune to 0 bytes removed %d files, and the rendering is there: %v", removed, ok)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("prune removed a file drift did not write: %v", err)
	}
}

// TestTheNewestRenderingsAreKept: of a spec kept by several runs, the newest
// run's rendering is read, and a build keeps its keptPacks newest packs.
func TestTheNewestRenderingsAreKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Unix(1700000000, 0)
	for i := range keptPacks + 3 {
		r := OpenRenders(cdir(t, dir), "build")
		r.Now = func() time.Time { return at.Add(time.Duration(i) * time.Minute) }
		recs := []rendercache.Record{{Spec: []byte(`{"path":"apps"}`), Data: fmt.Appendf(nil, "run %d", i)}}
		if i == 0 {
			recs = append(recs, rendercache.Record{Spec: []byte(`{"path":"first"}`), Data: []byte("first run's")})
		}
		if err := r.Keep(recs); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	r := OpenRenders(cdir(t, dir), "build")
	defer r.Close()
	if data, ok := r.Load([]byte(`{"path":"apps"}`)); string(data) != fmt.Sprintf("run %d", keptPacks+2) {
		t.Errorf("the newest run's rendering is not the one read: %q %v", data, ok)
	}
	if data, ok := r.Load([]byte(`{"path":"first"}`)); ok {
		t.Errorf("the oldest pack is still read: %q", data)
	}
	packs := files(t, filepath.Join(dir, versionDir(), "renders"))
	if len(packs) != keptPacks {
		t.Errorf("%d packs kept, want %d: %q", len(packs), keptPacks, packs)
	}

	// A run that took all its renderings from the newest pack writes none: it does
	// not push the older packs out.
	data, _ := r.Load([]byte(`{"path":"apps"}`))
	if err := r.Keep([]rendercache.Record{{Spec: []byte(`{"path":"apps"}`), Data: data}}); err != nil {
		t.Fatal(err)
	}
	if again := files(t, filepath.Join(dir, versionDir(), "renders")); !slices.Equal(again, packs) {
		t.Errorf("a run that made nothing wrote a pack: %q, before %q", again, packs)
	}
	// A rendering read from the newest pack but made again, differently (what it
	// read changed), is written.
	r.Now = func() time.Time { return at.Add(time.Hour) }
	if err := r.Keep([]rendercache.Record{{Spec: []byte(`{"path":"apps"}`), Data: []byte("made again")}}); err != nil {
		t.Fatal(err)
	}
	if again := files(t, filepath.Join(dir, versionDir(), "renders")); slices.Equal(again, packs) || len(again) != keptPacks {
		t.Errorf("a run that made a rendering wrote no pack, or kept too many: %q", again)
	}
}
