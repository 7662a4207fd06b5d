package report_test

import (
	"bytes"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/report/write"
)

func TestClusterScopedObjectsAreDumpedAndHeadedWithAnEmptyNamespace(t *testing.T) {
	t.Parallel()
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: production}\n"
	in := entry.Input{Targets: []entry.TargetInput{{Name: "t", Results: []dryrun.Result{reporttest.Result(t, "ns.yaml", 1, ns, "", ns)}}}}
	rep := entrytest.Build(t, in, entry.Options{})
	if d := rep.Targets[0].Objects[0].Diff; !strings.Contains(d, "+++ merged/v1.Namespace..production\n") {
		t.Fatalf("diff not headed with kubectl's name:\n%s", d)
	}
	dir := t.TempDir()
	if err := write.Dump(dir, rep); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reporttest.Tree(t, dir), ","); got != ".,live,merged,merged/v1.Namespace..production" {
		t.Fatalf("Dump wrote %s", got)
	}
}

// splitInput is a split target: a ConfigMap the pull request changes and the cluster
// has drifted on, and a Service diffed against the live object because the base's
// preview failed.
func splitInput(t *testing.T) entry.Input {
	cm := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {" + data + "}\n"
	}
	svc := func(port string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: " + port + "}]}\n"
	}
	head := reporttest.Result(t, "cm.yaml", 1, cm("color: green"), cm("color: red"), cm("color: green"))
	base := reporttest.Result(t, "cm.yaml", 1, cm("color: blue"), cm("color: red"), cm("color: blue"))
	svcHead := reporttest.Result(t, "svc.yaml", 1, svc("81"), svc("80"), svc("81"))
	svcBase := reporttest.Result(t, "svc.yaml", 1, svc("80"), svc("80"), "")
	svcBase.Err = &dryrun.Message{Reason: reason.Timeout, Message: "timed out"}
	return entry.Input{Base: "main", Targets: []entry.TargetInput{{Name: "shop",
		Split: []entry.Split{{Head: head, Base: &base}, {Head: svcHead, Base: &svcBase}}}}}
}

func TestSplitDiffsAreHeadedByWhatTheyCompare(t *testing.T) {
	t.Parallel()
	rep := entrytest.Build(t, splitInput(t), entry.Options{})
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
	_ = write.Text(&text, rep, write.TextOptions{})
	_ = write.Markdown(&md, rep, write.MarkdownOptions{})
	_ = report.WriteJSON(&js, rep)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "json": js.String()} {
		if strings.Contains(out, "merged/") || !strings.Contains(out, "head/v1.ConfigMap.shop.settings") {
			t.Errorf("%s report does not name the split's sides:\n%s", name, out)
		}
	}
	dir := t.TempDir()
	if err := write.Dump(dir, rep); err != nil {
		t.Fatal(err)
	}
	want := ".,base,base/v1.ConfigMap.shop.settings,head,head/v1.ConfigMap.shop.settings,head/v1.Service.shop.web,live,live/v1.Service.shop.web"
	if got := strings.Join(reporttest.Tree(t, dir), ","); got != want {
		t.Fatalf("Dump wrote %s\nwant %s", got, want)
	}
}

func TestExternalDiffRunsOnEachPairOfSides(t *testing.T) {
	t.Parallel()
	rep := entrytest.Build(t, splitInput(t), entry.Options{})
	var out bytes.Buffer
	if err := write.ExternalDiff(t.Context(), "diff -r", write.Run, rep, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join("base", "v1.ConfigMap.shop.settings"), filepath.Join("live", "v1.Service.shop.web")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("external diff output lacks %q:\n%s", want, out.String())
		}
	}
}

func service(meta, spec string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop" + meta + "}\nspec: {" + spec + "}\n"
}

// ephemeralInput is what two runs on fresh ephemeral servers seeded with the same base
// give: the same objects, with the identity and allocations of each seeding.
func ephemeralInput(t *testing.T, uid, ts, ip, nodePort string) entry.Input {
	meta := ", uid: " + uid + ", creationTimestamp: '" + ts + "', labels: {app: web}"
	live := service(meta, "type: NodePort, clusterIP: "+ip+", clusterIPs: ["+ip+"], ports: [{port: 80, nodePort: "+nodePort+"}]")
	merged := service(meta, "type: NodePort, clusterIP: "+ip+", clusterIPs: ["+ip+"], ports: [{port: 80, nodePort: "+nodePort+"}, {port: 81, nodePort: 3"+nodePort[1:]+"}]")
	rendered := service(", labels: {app: web}", "type: NodePort, ports: [{port: 80}, {port: 81}]")
	return entry.Input{Ref: "HEAD", Base: "main", Cluster: report.ClusterEphemeral,
		Targets: []entry.TargetInput{{Name: "t", Results: []dryrun.Result{reporttest.Result(t, "svc.yaml", 1, rendered, live, merged)}}}}
}

func TestEphemeralRunsAreByteIdenticalAcrossSeedings(t *testing.T) {
	t.Parallel()
	render := func(in entry.Input) string {
		rep := entrytest.Build(t, in, entry.Options{Ephemeral: in.Cluster == report.ClusterEphemeral})
		var text, md, js bytes.Buffer
		_ = write.Text(&text, rep, write.TextOptions{ShowUnchanged: true})
		_ = write.Markdown(&md, rep, write.MarkdownOptions{})
		_ = report.WriteJSON(&js, rep)
		o := rep.Targets[0].Objects[0]
		return text.String() + md.String() + js.String() + o.FromYAML + o.ToYAML
	}
	first := render(ephemeralInput(t, "5f0c-1", "2026-01-01T00:00:00Z", "10.0.0.17", "30001"))
	second := render(ephemeralInput(t, "77aa-2", "2026-01-01T00:00:09Z", "10.0.0.203", "31502"))
	if first != second {
		t.Fatalf("two ephemeral runs differ:\n%s\n---\n%s", first, second)
	}
	if !strings.Contains(first, "clusterIP: (allocated)") || !strings.Contains(first, "nodePort: (allocated)") {
		t.Fatalf("allocated values not marked:\n%s", first)
	}
	for _, seeded := range []string{"5f0c", "2026-01-01", "10.0.0.17", "30001"} {
		if strings.Contains(first, seeded) {
			t.Errorf("the report or dump shows %q, which the seeding made up", seeded)
		}
	}
}
