package kube

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// clientMakers are client-go's constructors of cluster clients and of the transports
// that carry a configuration's credentials.
var clientMakers = []string{"NewForConfig", "NewForConfigOrDie", "NewForConfigAndClient", "RESTClientFor", "RESTClientForConfigAndClient", "UnversionedRESTClientFor", "NewDiscoveryClientForConfig", "TransportFor", "HTTPClientFor"}

// TestNoClientIsMadeOutsideKube: no file of drift but this package's (tests and the
// test API server's harness, internal/testenv, aside) calls one of client-go's
// constructors of clients or transports, so that every request to a cluster goes
// through what this package makes: the clients a Connection holds, with the one
// retry policy, and the read-only proxy Helm's lookup reads through
// (docs/architecture.md).
func TestNoClientIsMadeOutsideKube(t *testing.T) {
	for _, root := range []string{"../../internal", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || filepath.ToSlash(path) == "../../internal/kube" || filepath.ToSlash(path) == "../../internal/testenv") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					for _, m := range clientMakers {
						if sel.Sel.Name == m {
							t.Errorf("%s calls %s: clients are made in internal/kube only", path, m)
						}
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
