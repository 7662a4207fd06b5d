//go:build ignore

// Command drift-sops-oracle runs kustomize-controller's own decryptor
// (internal/decryptor) over drift's SOPS cases (internal/sopsdoc/testdata/oracle)
// and records what it makes, which internal/sopsdoc's TestOracle compares drift's
// Decrypt and DecryptSource with:
//
//   - each cases/NAME.yaml, one object, through Decryptor.DecryptResource (the
//     decryption kustomize-controller runs on every built object): NAME.want.json is
//     the object it returns, "null" when it leaves it alone;
//   - sources/, a kustomization directory, through Decryptor.DecryptSources (run
//     before the build on the files its secretGenerators and patches read): every file of it as
//     it is afterwards, in sources.want/.
//
// The age key is key.agekey, given to the decryptor as the controller gets it: the
// Kustomization's spec.decryption.secretRef names a Secret holding it (here in
// controller-runtime's fake client) and ImportKeys reads it.
//
// It is drift's code, not kustomize-controller's: copy it into a kustomize-controller
// checkout (the Go module proxy serves github.com/fluxcd/kustomize-controller) as
// hack/drift-sops-oracle/main.go, since it imports the controller's internal
// packages, and run it from the checkout's root; the ignore build tag keeps drift's
// own go commands off it (hack/sops-oracle/README.md has every step):
//
//	go run ./hack/drift-sops-oracle/main.go <drift>/internal/sopsdoc/testdata/oracle
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/kustomize/api/provider"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/kustomize-controller/internal/decryptor"
	"github.com/fluxcd/pkg/apis/meta"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dir string) error {
	key, err := os.ReadFile(filepath.Join(dir, "key.agekey"))
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sops-keys", Namespace: "flux-system"},
		Data:       map[string][]byte{"identity.agekey": key},
	}).Build()
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{Decryption: &kustomizev1.Decryption{Provider: "sops", SecretRef: &meta.LocalObjectReference{Name: "sops-keys"}}}}
	root, err := os.MkdirTemp("", "sops-oracle")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	d, cleanup, err := decryptor.New(c, ks, decryptor.WithRoot(root))
	if err != nil {
		return err
	}
	defer cleanup()
	if err := d.ImportKeys(context.Background()); err != nil {
		return err
	}
	factory := provider.NewDefaultDepProvider().GetResourceFactory()
	cases, _ := filepath.Glob(filepath.Join(dir, "cases", "*.yaml"))
	for _, file := range cases {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		res, err := factory.FromBytes(data)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		out, err := d.DecryptResource(res)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		want := []byte("null")
		if out != nil {
			if want, err = out.MarshalJSON(); err != nil {
				return err
			}
		}
		var v any
		_ = json.Unmarshal(want, &v)
		want, _ = json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(strings.TrimSuffix(file, ".yaml")+".want.json", append(want, '\n'), 0o644); err != nil {
			return err
		}
	}
	src := filepath.Join(dir, "sources")
	if err := os.CopyFS(filepath.Join(root, "sources"), os.DirFS(src)); err != nil {
		return err
	}
	if err := d.DecryptSources(filepath.Join(root, "sources")); err != nil {
		return err
	}
	outDir := filepath.Join(dir, "sources.want")
	_ = os.RemoveAll(outDir)
	return filepath.WalkDir(filepath.Join(root, "sources"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(root, "sources"), p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(outDir, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(outDir, rel), data, 0o644)
	})
}
