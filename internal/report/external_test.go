package report

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/object"
)

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestDumpRefusesFileNamesThatAreNotOneElement hands Dump what validation upstream
// should never let through, and checks that nothing is written outside its directory
// and that the healthy object is still written.
func TestDumpRefusesFileNamesThatAreNotOneElement(t *testing.T) {
	t.Parallel()
	hostile := []string{"v1.ConfigMap.shop.x/../../../escaped", "..", "v1.ConfigMap.shop.a\x00b", "v1.ConfigMap.shop.a\nb", `v1.ConfigMap.shop.x\..\..\escaped`}
	objs := []Object{{Category: Add, ID: object.ID{Kind: "ConfigMap", Name: "healthy"}, Source: "cm.yaml", merged: "a: 1\n", file: "v1.ConfigMap.shop.healthy"}}
	for _, f := range hostile {
		objs = append(objs, Object{Category: Modify, ID: object.ID{Kind: "ConfigMap", Name: f}, Source: "bad.yaml", live: "a: 1\n", merged: "a: 2\n", file: f})
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "dump")
	err := Dump(dir, &Report{Targets: []Target{{Name: "t", Objects: objs}}})
	if err == nil || strings.Count(err.Error(), "(bad.yaml)") != len(hostile) {
		t.Fatalf("want one refusal naming bad.yaml per hostile object, got %v", err)
	}
	got := strings.Join(listTree(t, parent), ",")
	if want := ".,a,a/dump,a/dump/live,a/dump/merged,a/dump/merged/v1.ConfigMap.shop.healthy"; got != want {
		t.Fatalf("Dump wrote %s, want %s", got, want)
	}
}

// TestDumpDoesNotFollowSymlinksOut plants a symlink where Dump writes: through
// os.Root, the write is refused instead of landing outside.
func TestDumpDoesNotFollowSymlinksOut(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	dir := filepath.Join(parent, "dump")
	for _, d := range []string{outside, filepath.Join(dir, "live")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "merged")); err != nil {
		t.Fatal(err)
	}
	o := Object{Category: Add, ID: object.ID{Kind: "ConfigMap", Name: "web"}, Source: "cm.yaml", merged: "a: 1\n", file: "v1.ConfigMap.shop.web"}
	err := Dump(dir, &Report{Targets: []Target{{Name: "t", Objects: []Object{o}}}})
	if err == nil {
		t.Fatal("Dump wrote through a symlink that leaves its directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("Dump wrote outside its directory: %v", entries)
	}
}

// TestNamesThatWouldWriteLinesAreQuoted: a name or file from content holding a newline
// or a terminal escape is shown quoted, so it cannot forge lines of the report.
func TestNamesThatWouldWriteLinesAreQuoted(t *testing.T) {
	o := Object{ID: object.ID{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "x\nNo changes."}, Source: "a\x1b[2Jb.yaml", Document: 2}
	if got, want := o.Title(), `v1 ConfigMap ns/"x\nNo changes."`; got != want {
		t.Errorf("Title() = %q, want %q", got, want)
	}
	if got, want := o.Where(), `"a\x1b[2Jb.yaml" document 2`; got != want {
		t.Errorf("Where() = %q, want %q", got, want)
	}
	plain := Object{ID: object.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "wéb"}, Source: "apps/web.yaml"}
	if got := plain.Title() + " " + plain.Where(); got != "apps/v1 Deployment shop/wéb apps/web.yaml" {
		t.Errorf("a visible name is shown as it is: %q", got)
	}
}
