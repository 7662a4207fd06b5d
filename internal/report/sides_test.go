package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

func TestFileNamesAreKubectlDiffs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id   object.ID
		want string
	}{
		{object.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, "apps.v1.Deployment.shop.web"},
		{object.ID{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "db"}, "v1.Secret.shop.db"},
		{object.ID{Version: "v1", Kind: "Namespace", Name: "production"}, "v1.Namespace..production"},
		{object.ID{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "view"}, "rbac.authorization.k8s.io.v1.ClusterRole..view"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := kubectlName(tt.id); got != tt.want {
				t.Fatalf("kubectlName(%+v) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestClusterScopedObjectsAreDumpedAndHeadedWithAnEmptyNamespace(t *testing.T) {
	t.Parallel()
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: production}\n"
	in := Input{Targets: []TargetInput{{Name: "t", Results: []dryrun.Result{result(t, "ns.yaml", 1, ns, "", ns)}}}}
	rep, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Targets[0].Objects[0].Diff; !strings.Contains(d, "+++ merged/v1.Namespace..production\n") {
		t.Fatalf("diff not headed with kubectl's name:\n%s", d)
	}
	dir := t.TempDir()
	if err := Dump(dir, rep); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(listTree(t, dir), ","); got != ".,live,merged,merged/v1.Namespace..production" {
		t.Fatalf("Dump wrote %s", got)
	}
}

// splitInput is a split target: a ConfigMap the pull request changes and the cluster
// has drifted on, and a Service diffed against the live object because the base's
// preview failed.
func splitInput(t *testing.T) Input {
	cm := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {" + data + "}\n"
	}
	svc := func(port string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: " + port + "}]}\n"
	}
	head := result(t, "cm.yaml", 1, cm("color: green"), cm("color: red"), cm("color: green"))
	base := result(t, "cm.yaml", 1, cm("color: blue"), cm("color: red"), cm("color: blue"))
	svcHead := result(t, "svc.yaml", 1, svc("81"), svc("80"), svc("81"))
	svcBase := result(t, "svc.yaml", 1, svc("80"), svc("80"), "")
	svcBase.Err = &dryrun.Message{Reason: reason.Timeout, Message: "timed out"}
	return Input{Base: "main", Targets: []TargetInput{{Name: "shop",
		Split: []Split{{Head: head, Base: &base}, {Head: svcHead, Base: &svcBase}}}}}
}

func TestSplitDiffsAreHeadedByWhatTheyCompare(t *testing.T) {
	t.Parallel()
	rep, err := Build(splitInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg := rep.Targets[0]
	heads := map[string]string{
		tg.Objects[0].Kind: tg.Objects[0].Diff, tg.Objects[1].Kind: tg.Objects[1].Diff, "drift": tg.Drift[0].Diff}
	for what, want := range map[string]string{
		"ConfigMap": "--- base/v1.ConfigMap.shop.settings\n+++ head/v1.ConfigMap.shop.settings\n",
		"Service":   "--- live/v1.Service.shop.web\n+++ head/v1.Service.shop.web\n",
		"drift":     "--- live/v1.ConfigMap.shop.settings\n+++ base/v1.ConfigMap.shop.settings\n",
	} {
		if !strings.HasPrefix(heads[what], want) {
			t.Errorf("%s diff is headed\n%s\nwant\n%s", what, heads[what], want)
		}
	}
	var text, md, js bytes.Buffer
	_ = WriteText(&text, rep, TextOptions{})
	_ = WriteMarkdown(&md, rep, MarkdownOptions{})
	_ = WriteJSON(&js, rep)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "json": js.String()} {
		if strings.Contains(out, "merged/") || !strings.Contains(out, "head/v1.ConfigMap.shop.settings") {
			t.Errorf("%s report does not name the split's sides:\n%s", name, out)
		}
	}
	dir := t.TempDir()
	if err := Dump(dir, rep); err != nil {
		t.Fatal(err)
	}
	want := ".,base,base/v1.ConfigMap.shop.settings,head,head/v1.ConfigMap.shop.settings,head/v1.Service.shop.web,live,live/v1.Service.shop.web"
	if got := strings.Join(listTree(t, dir), ","); got != want {
		t.Fatalf("Dump wrote %s\nwant %s", got, want)
	}
}

func TestExternalDiffRunsOnEachPairOfSides(t *testing.T) {
	t.Parallel()
	rep, err := Build(splitInput(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunExternalDiff(t.Context(), "diff -r", rep, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join("base", "v1.ConfigMap.shop.settings"), filepath.Join("live", "v1.Service.shop.web")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("external diff output lacks %q:\n%s", want, out.String())
		}
	}
}
