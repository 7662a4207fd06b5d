package report

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTheModelIsALeaf: the report package imports the standard library and drift's
// reason vocabulary only, so that writing, publishing and merging reports need no
// engine package (docs/architecture.md).
func TestTheModelIsALeaf(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"github.com/drift-gitops/drift/internal/reason": true}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !allowed[path] {
				t.Errorf("%s imports %s: the report model imports no package but the standard library's and reason", e.Name(), path)
			}
		}
	}
}
