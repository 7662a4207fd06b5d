package write_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/report/write"
)

// TestDumpRefusesFileNamesThatAreNotOneElement hands Dump what validation upstream
// should never let through, and checks that nothing is written outside its directory
// and that the healthy object is still written.
func TestDumpRefusesFileNamesThatAreNotOneElement(t *testing.T) {
	t.Parallel()
	hostile := []string{"v1.ConfigMap.shop.x/../../../escaped", "..", "v1.ConfigMap.shop.a\x00b", "v1.ConfigMap.shop.a\nb", `v1.ConfigMap.shop.x\..\..\escaped`}
	objs := []report.Object{{Category: report.Add, ID: report.ID{Kind: "ConfigMap", Name: "healthy"}, Source: "cm.yaml", ToYAML: "a: 1\n", File: "v1.ConfigMap.shop.healthy"}}
	for _, f := range hostile {
		objs = append(objs, report.Object{Category: report.Modify, ID: report.ID{Kind: "ConfigMap", Name: f}, Source: "bad.yaml", FromYAML: "a: 1\n", ToYAML: "a: 2\n", File: f})
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "dump")
	err := write.Dump(dir, &report.Report{Targets: []report.Target{{Name: "t", Objects: objs}}})
	if err == nil || strings.Count(err.Error(), "(bad.yaml)") != len(hostile) {
		t.Fatalf("want one refusal naming bad.yaml per hostile object, got %v", err)
	}
	got := strings.Join(reporttest.Tree(t, parent), ",")
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
	o := report.Object{Category: report.Add, ID: report.ID{Kind: "ConfigMap", Name: "web"}, Source: "cm.yaml", ToYAML: "a: 1\n", File: "v1.ConfigMap.shop.web"}
	err := write.Dump(dir, &report.Report{Targets: []report.Target{{Name: "t", Objects: []report.Object{o}}}})
	if err == nil {
		t.Fatal("Dump wrote through a symlink that leaves its directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("Dump wrote outside its directory: %v", entries)
	}
}
