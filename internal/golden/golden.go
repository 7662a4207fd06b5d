// Package golden compares test output with files under testdata/, the one golden
// helper of every package that has them: `go test -update` rewrites the files, and a
// mismatch shows the lines that differ.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sergi/go-diff/diffmatchpatch"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Check compares got with testdata/name, or writes it there with -update.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs from the golden file (go test -update rewrites it; review the change):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff shows the lines of want and got that differ, each marked - (want) or + (got),
// with the line number in want.
func Diff(want, got string) string {
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToRunes(want, got)
	var out strings.Builder
	line := 1
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMainRunes(a, b, false), lines) {
		text := strings.TrimSuffix(d.Text, "\n")
		n := strings.Count(d.Text, "\n")
		if !strings.HasSuffix(d.Text, "\n") {
			n++
		}
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			line += n
			continue
		case diffmatchpatch.DiffDelete:
			fmt.Fprintf(&out, "@ line %d\n%s\n", line, prefix("-", text))
			line += n
		case diffmatchpatch.DiffInsert:
			fmt.Fprintf(&out, "@ line %d\n%s\n", line, prefix("+", text))
		}
	}
	return out.String()
}

func prefix(mark, text string) string {
	return mark + strings.ReplaceAll(text, "\n", "\n"+mark)
}
