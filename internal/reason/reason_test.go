package reason

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"testing"
)

// declared returns the Reason constants reason.go declares, read from its source, so
// that a constant left out of the table is caught.
func declared(t *testing.T) []Reason {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "reason.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Reason
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Reason" {
				continue
			}
			for _, val := range v.Values {
				lit := val.(*ast.BasicLit)
				out = append(out, Reason(lit.Value[1:len(lit.Value)-1]))
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d Reason constants in reason.go", len(out))
	}
	return out
}

func TestEveryReasonIsInTheTableAndEveryErrorHasAHint(t *testing.T) {
	consts := declared(t)
	if len(consts) != len(All()) {
		t.Errorf("%d Reason constants, %d in the table", len(consts), len(All()))
	}
	for _, r := range consts {
		if _, ok := table[r]; !ok {
			t.Errorf("%s: not in the table", r)
			continue
		}
		if !r.Is(ErrorKind) && !r.Is(WarningKind) {
			t.Errorf("%s: neither an error nor a warning", r)
		}
		if r.Is(ErrorKind) && r.Hint() == "" {
			t.Errorf("%s: an error reason without a hint", r)
		}
	}
}

// docRow is a row of the reasons table in docs/report.md: | `reason` | kind | ... |
var docRow = regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (error|warning)")

func TestEveryReasonHasADocsRow(t *testing.T) {
	doc, err := os.ReadFile("../../docs/report.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Reason]bool{}
	for _, m := range docRow.FindAllStringSubmatch(string(doc), -1) {
		rows[Reason(m[1])] = true
	}
	for _, r := range All() {
		if !rows[r] {
			t.Errorf("%s: no row in docs/report.md's table of reasons", r)
		}
	}
	for r := range rows {
		if _, ok := table[r]; !ok {
			t.Errorf("docs/report.md documents %s, which drift does not use", r)
		}
	}
}
