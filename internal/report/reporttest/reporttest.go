// Package reporttest makes the dry-run results the report's tests build from
// (entrytest makes a whole run's input of them).
package reporttest

import (
	"encoding/base64"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// Obj decodes an object from YAML.
func Obj(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// Result is the dry-run result of the object rendered from document doc of source:
// live and merged are the live object and the prediction ("" for none).
func Result(t testing.TB, source string, doc int, rendered, live, merged string) dryrun.Result {
	t.Helper()
	r := dryrun.Result{Object: render.Object{Obj: Obj(t, rendered), Source: source, Doc: doc}}
	r.ID = object.IDOf(r.Object.Get())
	if live != "" {
		r.Live = Obj(t, live)
	}
	if merged != "" {
		r.Merged = Obj(t, merged)
	}
	return r
}

// B64 is s in standard base64, as a Secret's data holds it.
func B64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Tree lists what is under root (root itself as "."), sorted: what --dump wrote.
func Tree(t testing.TB, root string) []string {
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
