package render

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kustomize/v5/commands/edit"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeEdit runs `kustomize edit ARGS` with kustomize's own command on the
// kustomization in fSys's root.
func kustomizeEdit(t *testing.T, fSys filesys.FileSystem, args ...string) {
	t.Helper()
	dp := provider.NewDefaultDepProvider()
	var out bytes.Buffer
	cmd := edit.NewCmdEdit(fSys, dp.GetFieldValidator(), dp.GetResourceFactory(), &out)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("kustomize edit %v: %v\n%s", args, err, out.String())
	}
}

// An Argo CD kustomize source's options: drift's build equals kustomize's after the
// `kustomize edit` commands Argo CD runs (util/kustomize: set nameprefix, set
// namesuffix, set image, add label --force, add annotation --force, set namespace),
// run here with kustomize's own edit commands, object by object; an image given as
// NAME=* keeps the kustomization's new name, and an image entry is replaced whole
// (where Flux would merge it).
func TestArgoCDKustomizeOptionsEditAsKustomizeEditDoes(t *testing.T) {
	files := map[string]string{
		"kustomization.yaml": "resources: [deploy.yaml]\ncommonLabels: {team: web, env: dev}\nimages:\n- {name: nginx, newName: old/nginx, newTag: '1.26'}\n- {name: redis, newName: mirror/redis, newTag: '7'}\n",
		"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n" +
			"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: 'nginx:1.25'}, {name: cache, image: redis}, {name: side, image: busybox}]}\n",
	}
	images := []string{"nginx:1.27", "redis=*:8", "busybox=registry.local/busybox@sha256:0123"}
	fSys := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fSys.WriteFile("/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	kustomizeEdit(t, fSys, "set", "nameprefix", "--", "staging-")
	kustomizeEdit(t, fSys, "set", "namesuffix", "--", "-v2")
	kustomizeEdit(t, fSys, append([]string{"set", "image"}, images...)...)
	kustomizeEdit(t, fSys, "set", "replicas", "web=4")
	kustomizeEdit(t, fSys, "add", "label", "env:staging", "tier:front", "--force")
	kustomizeEdit(t, fSys, "add", "annotation", "--force", "owner:platform")
	kustomizeEdit(t, fSys, "set", "namespace", "--", "guestbook")
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fSys, "/")
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	for _, r := range m.Resources() {
		obj, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, obj)
	}

	opts := &KustomizeOptions{NamePrefix: "staging-", NameSuffix: "-v2", Namespace: "guestbook",
		CommonLabels: map[string]string{"env": "staging", "tier": "front"}, ForceCommonLabels: true, CommonAnnotations: map[string]string{"owner": "platform"},
		Images:   []kustypes.Image{{Name: "nginx", NewTag: "1.27"}, {Name: "redis", NewName: "*", NewTag: "8"}, {Name: "busybox", NewName: "registry.local/busybox", Digest: "sha256:0123"}},
		Replicas: []kustypes.Replica{{Name: "web", Count: 4}}}
	got := kustomizeSpec(os.DirFS(writeTree(t, files)), Spec{Path: "", Renderer: RendererKustomize, Kustomize: opts})
	if len(got.Failures) > 0 {
		t.Fatal(got.Failures)
	}
	var have []map[string]any
	for _, o := range got.Objects {
		have = append(have, o.Get().Object)
	}
	hj, _ := json.Marshal(have)
	wj, _ := json.Marshal(want)
	if string(hj) != string(wj) {
		t.Errorf("drift builds\n%s\nkustomize edit + build gives\n%s", hj, wj)
	}
	for _, s := range []string{`"replicas":4`, `"image":"nginx:1.27"`, `"image":"mirror/redis:8"`, `"image":"registry.local/busybox@sha256:0123"`, `"env":"staging"`, `"team":"web"`} {
		if !bytes.Contains(wj, []byte(s)) {
			t.Errorf("the fixture does not exercise %s", s)
		}
	}
}

// Without forceCommonLabels, a label the kustomization already has fails the build,
// as `kustomize edit add label` fails Argo CD's.
func TestAnArgoCDLabelTheKustomizationHasNeedsForce(t *testing.T) {
	files := map[string]string{"kustomization.yaml": "resources: [cm.yaml]\ncommonLabels: {env: dev}\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}
	got := kustomizeSpec(os.DirFS(writeTree(t, files)), Spec{Renderer: RendererKustomize, Kustomize: &KustomizeOptions{CommonLabels: map[string]string{"env": "staging"}}})
	if len(got.Failures) != 1 || !strings.Contains(got.Failures[0].Message, "label env already in kustomization file") {
		t.Errorf("failures: %+v", got.Failures)
	}
}
