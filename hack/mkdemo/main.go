// Command mkdemo builds the demo GitOps repository from testdata/demo: the commit of
// base/ is tagged base, the commit of head/ is main.
//
//	go run ./hack/mkdemo DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkdemo DIR")
		os.Exit(2)
	}
	if err := build(os.Args[1], filepath.Join("testdata", "demo")); err != nil {
		fmt.Fprintln(os.Stderr, "mkdemo:", err)
		os.Exit(1)
	}
}

func build(dir, src string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	r, err := gitfixture.Init(dir)
	if err != nil {
		return err
	}
	if _, err := r.CommitTree(filepath.Join(src, "base"), "demo: base state of the cluster"); err != nil {
		return err
	}
	if _, err := r.Git("tag", "base"); err != nil {
		return err
	}
	_, err = r.CommitTree(filepath.Join(src, "head"), "demo: the change under review")
	return err
}
