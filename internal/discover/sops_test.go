package discover

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/sopsdoc/sopstest"
)

// A postBuild.substituteFrom Secret the repository keeps encrypted with SOPS (a
// home lab's cluster-secrets): decrypted with the runner's key, its values are the
// variables and go to the scrubber; without the key, read from the cluster where
// kustomize-controller reads it; with neither, placeholders, never ciphertext, and
// the target says so.
func TestAnEncryptedSubstituteFromSecretIsReadAsTheControllerReadsIt(t *testing.T) {
	key := sopstest.NewKey(t)
	plain := "apiVersion: v1\nkind: Secret\nmetadata: {name: cluster-secrets, namespace: flux-system}\ndata:\n  api_token: " +
		"czNjcjN0LXQwa2VuLXZhbHVl\n" // s3cr3t-t0ken-value
	files := fstest.MapFS{}
	src := os.DirFS("../../testdata/flux")
	if err := fs.WalkDir(src, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		files[p] = &fstest.MapFile{Data: data}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	files["secrets/staging/cluster-secrets.yaml"] = &fstest.MapFile{Data: sopstest.Encrypt(t, []byte(plain), "yaml", key, "^(data|stringData)$")}
	discoverWith := func(opts Options) Target {
		t.Helper()
		opts.Paths, opts.Revisions = staging.Paths, staging.Revisions
		opts.Render = func(spec render.Spec) (*render.Result, error) { return render.Render(files, spec) }
		res, err := Discover(context.Background(), files, opts)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(res.Secrets, ","), "ENC[") {
			t.Errorf("ciphertext given to the scrubber: %v", res.Secrets)
		}
		return byName(res)["Kustomization/flux-system/apps"]
	}

	t.Setenv("SOPS_AGE_KEY", key.Identity)
	apps := discoverWith(Options{})
	if v := apps.Specs[0].Substitute["api_token"]; apps.Refused != "" || v != "s3cr3t-t0ken-value" {
		t.Errorf("with the key: %q, refused %q", v, apps.Refused)
	}

	t.Setenv("SOPS_AGE_KEY", sopstest.NewKey(t).Identity)
	read := ""
	apps = discoverWith(Options{LiveObject: func(kind, ns, name string) (*unstructured.Unstructured, error) {
		read = kind + " " + ns + "/" + name
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"api_token": "bGl2ZS12YWx1ZQ=="}}}, nil
	}})
	if v := apps.Specs[0].Substitute["api_token"]; apps.Refused != "" || v != "live-value" || read != "Secret flux-system/cluster-secrets" ||
		!strings.Contains(strings.Join(apps.Notes, "\n"), "its values are read from the cluster") || !strings.Contains(strings.Join(apps.Notes, "\n"), key.Recipient) {
		t.Errorf("another key, from the cluster: %q, read %q, refused %q, notes %v", v, read, apps.Refused, apps.Notes)
	}

	apps = discoverWith(Options{})
	if v := apps.Specs[0].Substitute["api_token"]; apps.Refused != "" || v != "sops-encrypted-api_token" ||
		!strings.Contains(strings.Join(apps.Notes, "\n"), "what it fills in is not compared") {
		t.Errorf("another key, no cluster: %q, refused %q, notes %v", v, apps.Refused, apps.Notes)
	}
}
