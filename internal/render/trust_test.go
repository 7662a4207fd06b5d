package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/text/encoding/unicode"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/source"
)

const twoDocs = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n"

func utf16(t *testing.T, e unicode.Endianness, bom unicode.BOMPolicy, s string) []byte {
	t.Helper()
	out, err := unicode.UTF16(e, bom).NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEncodingsAreReadAsKubectlReadsThemOrRefusedWhole: UTF-16 with a byte-order mark
// gives every document (kubectl applies both); what kubectl cannot read is one error
// for the file, never its first document alone.
func TestEncodingsAreReadAsKubectlReadsThemOrRefusedWhole(t *testing.T) {
	t.Parallel()
	utf32 := func(bigEndian bool) []byte {
		var b bytes.Buffer
		if bigEndian {
			b.Write([]byte{0, 0, 0xFE, 0xFF})
		} else {
			b.Write([]byte{0xFF, 0xFE, 0, 0})
		}
		for _, r := range twoDocs {
			if bigEndian {
				b.Write([]byte{0, 0, 0, byte(r)})
			} else {
				b.Write([]byte{byte(r), 0, 0, 0})
			}
		}
		return b.Bytes()
	}
	fsys := fstest.MapFS{
		"ok/utf16le.yaml":  {Data: utf16(t, unicode.LittleEndian, unicode.UseBOM, twoDocs)},
		"ok/utf16be.yaml":  {Data: utf16(t, unicode.BigEndian, unicode.UseBOM, strings.ReplaceAll(twoDocs, "name: ", "name: be-"))},
		"ok/utf8bom.yaml":  {Data: append([]byte{0xEF, 0xBB, 0xBF}, strings.ReplaceAll(twoDocs, "name: ", "name: bom-")...)},
		"bad/utf32le.yaml": {Data: utf32(false)},
		"bad/utf32be.yaml": {Data: utf32(true)},
		"bad/nobom.yaml":   {Data: utf16(t, unicode.LittleEndian, unicode.IgnoreBOM, twoDocs)},
	}
	res, err := Plain(fsys, Options{Paths: []string{"ok"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 6 || len(res.Failures) != 0 {
		t.Errorf("UTF-16 and UTF-8 with a mark: %d objects %v, failures %v; want all 6", len(res.Objects), ids(res), res.Failures)
	}
	res, err = Plain(fsys, Options{Paths: []string{"bad"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 0 || len(res.Failures) != 3 {
		t.Fatalf("unreadable encodings: objects %v, failures %v; want none and 3", ids(res), res.Failures)
	}
	for _, f := range res.Failures {
		if f.Reason != reason.Malformed || f.Doc != 0 || !strings.Contains(f.Message, "save it as UTF-8") {
			t.Errorf("%s: %s %q", f.Source, f.Reason, f.Message)
		}
	}
}

// TestSymlinkLoopsAreReadOnce: a directory that links back to its parent, in the work
// tree and in a commit. Each real object is previewed once, no duplicate errors, and
// one note says what was not read again.
func TestSymlinkLoopsAreReadOnce(t *testing.T) {
	t.Parallel()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Write(map[string]string{"apps/cm.yaml": twoDocs}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(r.Dir, "apps", "loop")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("loop"); err != nil {
		t.Fatal(err)
	}
	repo, err := source.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"", "HEAD"} {
		snap, err := repo.Snapshot(ref)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Plain(snap.FS, Options{Paths: []string{"apps"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Objects) != 2 || len(res.Failures) != 0 {
			t.Errorf("ref %q: objects %v, failures %v; want each object once", ref, ids(res), res.Failures)
		}
		if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "apps/loop/apps") {
			t.Errorf("ref %q: notes %q, want one about the loop", ref, res.Notes)
		}
	}
}

// TestDuplicateMessagesGrowLinearly: 5,000 copies of one object once made a report of
// 616 MB, each message naming every other copy.
func TestDuplicateMessagesGrowLinearly(t *testing.T) {
	t.Parallel()
	const n = 5000
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\n---\n"
	res, err := Plain(fstest.MapFS{"dup.yaml": {Data: []byte(strings.Repeat(doc, n))}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) != n || len(res.Objects) != 0 {
		t.Fatalf("%d failures, %d objects; want %d duplicates", len(res.Failures), len(res.Objects), n)
	}
	total := 0
	for _, f := range res.Failures {
		total += len(f.Message)
	}
	if total > 300*n {
		t.Errorf("%d bytes of messages for %d duplicates: not linear", total, n)
	}
	if m := res.Failures[0].Message; !strings.Contains(m, "and 4996 more") {
		t.Errorf("message %q does not say how many more", m)
	}
}

// TestNestedRepositoriesAreFailuresNamingThem: a directory with its own .git in the
// work tree, or a submodule in a commit, inside a plain target. Its files are not
// read, and the target says so by name instead of looking complete.
func TestNestedRepositoriesAreFailuresNamingThem(t *testing.T) {
	t.Parallel()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sha, err := r.CommitFiles(map[string]string{"apps/cm.yaml": twoDocs}, "base")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("update-index", "--add", "--cacheinfo", "160000,"+sha+",apps/lib"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("commit", "-q", "-m", "submodule"); err != nil {
		t.Fatal(err)
	}
	secret := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nested}\n"
	if err := r.Write(map[string]string{"apps/lib/.git": "gitdir: ../../.git/modules/lib\n", "apps/lib/x.yaml": secret}); err != nil {
		t.Fatal(err)
	}
	repo, err := source.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{"": "apps/lib is a git submodule or a repository of its own", "HEAD": "apps/lib is a git submodule (commit " + sha[:12]} {
		snap, err := repo.Snapshot(ref)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Plain(snap.FS, Options{Paths: []string{"apps"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Objects) != 2 || len(res.Failures) != 1 {
			t.Fatalf("ref %q: objects %v, failures %v; want the two of cm.yaml and one failure", ref, ids(res), res.Failures)
		}
		if f := res.Failures[0]; f.Source != "apps/lib" || f.Reason != reason.Refused || !strings.Contains(f.Message, want) {
			t.Errorf("ref %q: %s %s %q", ref, f.Source, f.Reason, f.Message)
		}
	}
}

// TestChartFilesOutsideTheContentAreRefused: a chart that holds a symlink to .git (the
// file actions/checkout writes the token into) is refused, naming the file, and not
// reported as a template error that hides why.
func TestChartFilesOutsideTheContentAreRefused(t *testing.T) {
	t.Parallel()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"chart/Chart.yaml":         "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {x: {{ .Files.Get \"files/config\" | quote }}}\n",
		"chart/files/placeholder":  "x\n",
		"elsewhere/placeholder.md": "x\n",
	}, "base"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../.git/config", filepath.Join(r.Dir, "chart", "files", "config")); err != nil {
		t.Fatal(err)
	}
	repo, err := source.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot("")
	if err != nil {
		t.Fatal(err)
	}
	res := Helm(snap.FS, "chart", HelmOptions{ReleaseName: "r"})
	if len(res.Objects) != 0 || len(res.Failures) != 1 {
		t.Fatalf("objects %v, failures %v; want one failure", ids(res), res.Failures)
	}
	if f := res.Failures[0]; f.Reason != reason.Refused || !strings.Contains(f.Message, "chart/files/config") || strings.Contains(f.Message, "[core]") {
		t.Errorf("%s %s %q; want refused naming chart/files/config", f.Source, f.Reason, f.Message)
	}
}
