package main

import (
	"fmt"
	"k8s.io/client-go/tools/clientcmd"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// A pull request previewed by N runners (--shard I/N) and merged (drift report merge)
// gives the report one run gives, byte for byte, and the same exit status: objects
// of every category, drift told apart from the change, a render failure, an object
// the server refuses, and pruning through an ApplySet. Shards of another commit are
// refused.
func TestShardsMergeIntoTheRun(t *testing.T) {
	ns := namespace(t)
	cm := func(name, value, meta string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n%sdata: {v: %q}\n", name, ns, meta, value)
	}
	id := inventory.ApplySetID("parent", ns, "ConfigMap", "")
	parent := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parent\n  namespace: %s\n  labels: {applyset.kubernetes.io/id: %s}\n  annotations:\n    applyset.kubernetes.io/tooling: kubectl/v1.32\n    applyset.kubernetes.io/contains-group-kinds: ConfigMap\n", ns, id)
	member := "  labels: {applyset.kubernetes.io/part-of: " + id + "}\n"
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %s}\nstringData: {password: hunter2-shard}\n", ns)

	base := map[string]string{
		"drift.yaml":         "targets:\n- {name: apps, path: apps}\n- {name: pruned, path: pruned}\n- {name: broken, path: broken}\n",
		"apps/secret.yaml":   secret,
		"pruned/parent.yaml": parent,
		"broken/ok.yaml":     cm("ok", "1", ""),
	}
	live := []string{secret, parent}
	for i := range 8 {
		base[fmt.Sprintf("apps/c%d.yaml", i)] = cm(fmt.Sprintf("c%d", i), "old", "")
		live = append(live, cm(fmt.Sprintf("c%d", i), "old", ""))
	}
	for _, name := range []string{"kept", "gone"} {
		base["pruned/"+name+".yaml"] = cm(name, "old", member)
		live = append(live, cm(name, "old", member))
	}
	apply(t, "kubectl", strings.Join(live, "\n---\n"))
	apply(t, "kubectl-edit", cm("c2", "drifted", "")) // drift already in the cluster

	r := repo(t, base)
	if _, err := r.Git("checkout", "-q", "-b", "pr"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"apps/c1.yaml":     cm("c1", "new", ""),
		"apps/c5.yaml":     cm("c5", "hunter2-shard", ""), // a Secret's value, scrubbed wherever it is
		"apps/c6.yaml":     "",
		"apps/c8.yaml":     cm("c8", "added", ""),
		"apps/bad.yaml":    fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: %s}\nbogus: field\n", ns),
		"pruned/gone.yaml": "",
		"pruned/kept.yaml": cm("kept", "changed", member),
		"broken/bad.yaml":  "kind: [unclosed\n",
		"broken/more.yaml": cm("more", "2", ""),
	}, "the change"); err != nil {
		t.Fatal(err)
	}
	args := []string{"diff", "--repo", r.Dir, "--ref", "pr", "--base", "main"}
	whole := drift(t, append(args, "-o", "json")...)
	if whole.code != 2 || !strings.Contains(whole.stdout, `"story": "drift"`) || !strings.Contains(whole.stdout, `"category": "delete"`) {
		t.Fatalf("the whole run: exit %d (want 2: a render failure and a refused object), drift and a delete expected\n%s\n%s", whole.code, whole.stdout, whole.stderr)
	}
	if strings.Contains(whole.stdout, "hunter2-shard") {
		t.Fatal("the whole run leaks the Secret's value")
	}

	dir := t.TempDir()
	for _, n := range []int{2, 3} {
		var files []string
		for i := 1; i <= n; i++ {
			f := filepath.Join(dir, fmt.Sprintf("%d-of-%d.json", i, n))
			o := drift(t, append(args, "--shard", fmt.Sprintf("%d/%d", i, n), "-o", "json", "--out", f)...)
			if o.code == 0 || strings.Contains(o.stderr, "drift: error:") {
				t.Fatalf("shard %d/%d: exit %d\n%s", i, n, o.code, o.stderr)
			}
			files = append(files, f)
		}
		merged := drift(t, append([]string{"report", "merge", "--repo", r.Dir, "--ref", "pr", "--base", "main", "-o", "json"}, files...)...)
		if merged.code != whole.code || merged.stdout != whole.stdout {
			t.Errorf("%d shards merged: exit %d (the run: %d)\n%s\n%s", n, merged.code, whole.code, golden.Diff(whole.stdout, merged.stdout), merged.stderr)
		}
		if merged.stderr != "" {
			t.Errorf("%d shards merged: stderr %s", n, merged.stderr)
		}
	}
	// A merged report holds the diffs, not the objects an external diff program
	// compares: its text shows drift's diffs, and the program is never run.
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "no-such-diff-program-xyz")
	merged := drift(t, "report", "merge", "--repo", r.Dir, "--ref", "pr", "--base", "main", filepath.Join(dir, "1-of-2.json"), filepath.Join(dir, "2-of-2.json"))
	if merged.code != whole.code || !strings.Contains(merged.stdout, "--- live/") || strings.Contains(merged.stdout, "KUBECTL_EXTERNAL_DIFF") || strings.Contains(merged.stderr, "no-such-diff-program-xyz") {
		t.Errorf("merged with an external diff program set: exit %d\n%s\n%s", merged.code, merged.stdout, merged.stderr)
	}

	// Shards merged, not believed: each forged shard is refused, saying why.
	merge := func(files ...string) outcome {
		return drift(t, append([]string{"report", "merge", "--repo", r.Dir, "--ref", "pr", "--base", "main", "-o", "json"}, files...)...)
	}
	forge := func(name string, edit func(rep *report.Report)) string {
		data, err := os.ReadFile(filepath.Join(dir, "2-of-2.json"))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.Read(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		edit(rep)
		f := filepath.Join(dir, name)
		writeReportFile(t, f, rep)
		return f
	}
	apps := func(rep *report.Report) *report.Target {
		for i := range rep.Targets {
			if rep.Targets[i].Name == "apps" {
				return &rep.Targets[i]
			}
		}
		t.Fatal("no target apps")
		return nil
	}
	for _, c := range []struct {
		name, want string
		edit       func(rep *report.Report)
	}{
		{"an object removed", "does not hold it", func(rep *report.Report) {
			a := apps(rep)
			for i, o := range a.Objects {
				if o.Category == report.Modify || o.Category == report.Add || o.Category == report.Unchanged {
					a.Objects = append(a.Objects[:i], a.Objects[i+1:]...)
					break
				}
			}
			recount(rep)
		}},
		{"objects turned unchanged", "unchanged but has a diff", func(rep *report.Report) {
			for i := range rep.Targets {
				for j := range rep.Targets[i].Objects {
					rep.Targets[i].Objects[j].Category = report.Unchanged
				}
			}
		}},
		{"totals that are not its objects'", "is not the count of its objects", func(rep *report.Report) {
			rep.Summary = report.Summary{Unchanged: rep.Summary.Unchanged}
		}},
		{"another shard's object", "refused: it reports", func(rep *report.Report) {
			a := apps(rep)
			for _, o := range a.Objects {
				if o.Kind == "ConfigMap" && o.Inventory == "" {
					for _, n := range []string{"c1", "c2", "c3", "c4"} {
						if n == o.Name {
							continue
						}
						other := o
						other.Name, other.Source = n, "apps/"+n+".yaml"
						a.Objects = append(a.Objects, other)
					}
					break
				}
			}
			recount(rep)
		}},
		{"a carriage return in a warning", "control character", func(rep *report.Report) {
			for i := range rep.Targets {
				for j := range rep.Targets[i].Objects {
					o := &rep.Targets[i].Objects[j]
					o.Warnings = append(o.Warnings, report.Message{Reason: reason.ServerWarning, Message: "fine\r</details>\n### no changes"})
				}
			}
		}},
	} {
		o := merge(filepath.Join(dir, "1-of-2.json"), forge(strings.ReplaceAll(c.name, " ", "-")+".json", c.edit))
		if o.code != 2 || !strings.Contains(o.stderr, "refused") || !strings.Contains(o.stderr, c.want) {
			t.Errorf("a shard with %s: exit %d, want 2 and a refusal saying %q\n%s", c.name, o.code, c.want, o.stderr)
		}
	}
	if o := drift(t, "report", "merge", "--repo", r.Dir, "-o", "json", filepath.Join(dir, "1-of-2.json"), filepath.Join(dir, "2-of-2.json")); o.code != 2 ||
		!strings.Contains(o.stderr, "run drift report merge with the --ref and --base the shards ran with") {
		t.Errorf("a merge of another commit: exit %d\n%s", o.code, o.stderr)
	}

	// A shard of another commit is refused, and says which files and why.
	if _, err := r.CommitFiles(map[string]string{"apps/c1.yaml": cm("c1", "newer", "")}, "later"); err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(dir, "later-2-of-2.json")
	drift(t, append(args, "--shard", "2/2", "-o", "json", "--out", later)...)
	o := merge(filepath.Join(dir, "1-of-2.json"), later)
	if o.code != 2 || !strings.Contains(o.stderr, "are not shards of one run: they preview commit") {
		t.Errorf("shards of two commits: exit %d\n%s", o.code, o.stderr)
	}
	// A shard does not publish: that is the merge's job.
	o = drift(t, append(args, "--shard", "1/2", "--github-comment")...)
	if o.code != 2 || !strings.Contains(o.stderr, "publish once, from drift report merge") {
		t.Errorf("--github-comment with --shard: exit %d\n%s", o.code, o.stderr)
	}
	if _, err := os.Stat(later); err != nil {
		t.Fatal(err)
	}
}

// recount makes a forged report's summary the count of its objects.
func recount(rep *report.Report) {
	rep.Summary = report.Summary{}
	for _, tg := range rep.Targets {
		for _, o := range tg.Objects {
			switch o.Category {
			case report.Add:
				rep.Summary.Add++
			case report.Modify:
				rep.Summary.Modify++
			case report.Unchanged:
				rep.Summary.Unchanged++
			case report.Delete:
				rep.Summary.Delete++
			case report.Error:
				rep.Summary.Error++
			}
			if len(o.Risks) > 0 {
				rep.Summary.Risky++
			}
		}
	}
}

// withDeadContext is a copy of the kubeconfig at path whose context name points at an
// address nothing listens on: a run that connects to it fails.
func withDeadContext(t *testing.T, path, name string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters[name].Server = "https://127.0.0.1:1"
	out := filepath.Join(t.TempDir(), "kubeconfig-without-"+name)
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A fleet split by cluster (--shard-by cluster): each shard previews its clusters'
// targets whole and never connects to another cluster (its context is dead for it),
// and the merge gives the report one run over every cluster gives, byte for byte: a
// Secret value of one cluster's target, copied into another cluster's ConfigMap, is
// hidden there too.
func TestShardsByClusterMergeIntoTheRun(t *testing.T) {
	kubeconfig, beta := twoContexts(t)
	ns := namespace(t)
	cm := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {v: %q}\n", name, ns, value)
	}
	nsDoc := "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n"
	applyTo(t, beta.Config, "kubectl", nsDoc)
	apply(t, "kubectl", cm("a1", "old"))
	applyTo(t, beta.Config, "kubectl", cm("b1", "old"))
	r := repo(t, map[string]string{
		"drift.yaml": "targets:\n- {name: on-alpha, path: alpha, context: alpha}\n- {name: on-beta, path: beta, context: beta}\n" +
			"- {name: more-on-alpha, path: alpha2, context: alpha}\n",
		"alpha/a1.yaml":    cm("a1", "new"),
		"alpha/a2.yaml":    cm("a2", "hunter2-by-cluster"), // beta's Secret's value
		"alpha2/a3.yaml":   cm("a3", "added"),
		"beta/b1.yaml":     cm("b1", "old"),
		"beta/ns.yaml":     nsDoc,
		"beta/secret.yaml": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %s}\nstringData: {password: hunter2-by-cluster}\n", ns),
	})
	args := []string{"diff", "--repo", r.Dir, "--ref", "main", "-o", "json"}
	whole := driftWith(t, kubeconfig, args...)
	if whole.code != 1 || strings.Contains(whole.stdout, "hunter2-by-cluster") || !strings.Contains(whole.stdout, `"name": "a3"`) || !strings.Contains(whole.stdout, `"name": "db"`) {
		t.Fatalf("the whole run: exit %d\n%s\n%s", whole.code, whole.stdout, whole.stderr)
	}
	dir := t.TempDir()
	var files []string
	for i, dead := range []string{"beta", "alpha"} { // shard 1 previews alpha, shard 2 beta
		f := filepath.Join(dir, fmt.Sprintf("%d.json", i+1))
		o := driftWith(t, withDeadContext(t, kubeconfig, dead), append(args, "--shard", fmt.Sprintf("%d/2", i+1), "--shard-by", "cluster", "--out", f)...)
		if o.code != 1 || strings.Contains(o.stderr, "drift: error") {
			t.Fatalf("shard %d/2 (context %s dead): exit %d\n%s", i+1, dead, o.code, o.stderr)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `"name": "b1"`) == (dead == "beta") || !strings.Contains(string(data), `"by": "cluster"`) {
			t.Errorf("shard %d/2 holds another cluster's objects, or does not say how it was split:\n%s", i+1, data)
		}
		files = append(files, f)
	}
	merged := drift(t, append([]string{"report", "merge", "--repo", r.Dir, "--ref", "main", "-o", "json"}, files...)...)
	if merged.code != whole.code || merged.stdout != whole.stdout {
		t.Errorf("shards by cluster merged: exit %d (the run: %d)\n%s\n%s", merged.code, whole.code, golden.Diff(whole.stdout, merged.stdout), merged.stderr)
	}
	// Shards split two ways are not one run.
	byObject := filepath.Join(dir, "by-object-2.json")
	driftWith(t, kubeconfig, append(args, "--shard", "2/2", "--out", byObject)...)
	if o := drift(t, "report", "merge", "--repo", r.Dir, "--ref", "main", "-o", "json", files[0], byObject); o.code != 2 || !strings.Contains(o.stderr, "they split the run by cluster against object") {
		t.Errorf("shards split two ways: exit %d\n%s", o.code, o.stderr)
	}
	if o := driftWith(t, kubeconfig, append(args, "--shard-by", "cluster")...); o.code != 2 || !strings.Contains(o.stderr, "--shard-by without --shard") {
		t.Errorf("--shard-by alone: exit %d\n%s", o.code, o.stderr)
	}
}
