package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestPullRequestCannotIgnoreItsOwnChange is the self-ignoring pull request: it edits a
// ConfigMap and, in the same change, tells drift.yaml to ignore /data, globally and on
// its target. Previewed as the Action previews it (--base the base branch), the edit is
// still a change; the report says drift.yaml changed, what was not used, and shows the
// file's diff.
func TestPullRequestCannotIgnoreItsOwnChange(t *testing.T) {
	ns := namespace(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: NS}\ndata: {color: COLOR}\n"
	apply(t, "kubectl", sub(strings.ReplaceAll(cm, "COLOR", "blue"), ns))
	r := repo(t, map[string]string{
		"drift.yaml":  "targets:\n  - name: app\n    path: app\n",
		"app/cm.yaml": sub(strings.ReplaceAll(cm, "COLOR", "blue"), ns),
	})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"drift.yaml": `targets:
  - name: app
    path: app
    ignore: [{kind: ConfigMap, paths: [/data]}]
ignore:
  - kind: ConfigMap
    paths: [/data]
mask:
  - kind: ConfigMap
    paths: [/data]
`,
		"app/cm.yaml": sub(strings.ReplaceAll(cm, "COLOR", "green"), ns),
	}, "hide the change"); err != nil {
		t.Fatal(err)
	}

	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base")
	if o.code != exitChanges {
		t.Fatalf("exit %d, want %d (a change)\n%s", o.code, exitChanges, o.stderr)
	}
	got := find(t, rep, "ConfigMap", "settings")
	if got.Category != "modify" || !strings.Contains(got.Diff, "+  color: green") {
		t.Errorf("the edit is hidden: %s\n%s", got.Category, got.Diff)
	}
	if rep.Config == nil {
		t.Fatal("the report does not say the change edits drift.yaml")
	}
	want := []string{"the top-level ignore rules", "the top-level mask rules", "target app: ignore rules"}
	if strings.Join(rep.Config.NotApplied, "|") != strings.Join(want, "|") {
		t.Errorf("not applied = %q, want %q", rep.Config.NotApplied, want)
	}
	if !strings.Contains(rep.Config.Diff, "+++ head/drift.yaml") || !strings.Contains(rep.Config.Diff, "+ignore:") {
		t.Errorf("no diff of drift.yaml:\n%s", rep.Config.Diff)
	}
	text := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base").stdout
	md := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "-o", "markdown").stdout
	for name, out := range map[string]string{"text": text, "markdown": md} {
		if !strings.Contains(out, "This change edits") || !strings.Contains(out, "the top-level ignore rules") {
			t.Errorf("%s report does not say what of drift.yaml was not used:\n%s", name, out)
		}
	}

	// Trusted local use: everything from the previewed ref, so the rule applies.
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--config-from", "head")
	if o.code != exitNoChanges || find(t, rep, "ConfigMap", "settings").Category != "unchanged" || rep.Config != nil {
		t.Errorf("--config-from head: exit %d, config %+v", o.code, rep.Config)
	}
}

// TestNewTargetCannotAddACluster: a pull request adds a target on a context the base's
// drift.yaml never names. That target is an error; the others are still previewed.
func TestNewTargetCannotAddACluster(t *testing.T) {
	ns := namespace(t)
	cm := sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n", ns)
	r := repo(t, map[string]string{"drift.yaml": "targets:\n  - {name: a, path: a}\n", "a/cm.yaml": cm})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{
		"drift.yaml": "targets:\n  - {name: a, path: a}\n  - {name: b, path: b, context: prod-admin}\n",
		"a/cm.yaml":  cm + "data: {k: v}\n",
		"b/cm.yaml":  strings.ReplaceAll(cm, "name: a", "name: b"),
	}, "new target"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base")
	if o.code != exitError || rep.Complete {
		t.Fatalf("exit %d complete %v, want an incomplete report", o.code, rep.Complete)
	}
	for _, tg := range rep.Targets {
		switch tg.Name {
		case "a":
			if len(tg.Objects) != 1 || tg.Objects[0].Category == "error" {
				t.Errorf("target a: %+v", tg.Objects)
			}
		case "b":
			if len(tg.Objects) != 1 || tg.Objects[0].ErrorReason != "config" || !strings.Contains(tg.Objects[0].Error, `"prod-admin"`) {
				t.Errorf("target b: %+v", tg.Objects)
			}
		}
	}
}

// TestKubeconfigFromTheRepositoryNeverRuns is the exec credential plugin attack: a pull
// request adds a kubeconfig whose user runs a program, and points drift.yaml at it.
// drift refuses the key, on the base and the head alike, and the program never runs.
func TestKubeconfigFromTheRepositoryNeverRuns(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users:
  - name: u
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1
        command: sh
        args: ["-c", "env > ` + marker + `; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\"}}'"]
        interactiveMode: Never
contexts: [{name: ci, context: {cluster: c, user: u}}]
current-context: ci
`
	files := map[string]string{
		"drift.yaml":         "targets:\n  - name: app\n    path: app\n    kubeconfig: ci/kubeconfig.yaml\n    context: ci\n",
		"ci/kubeconfig.yaml": kubeconfig,
		"app/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
	}
	r := repo(t, map[string]string{"README": "base\n"})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(files, "add a kubeconfig"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"diff", "--repo", r.Dir, "--ref", "main", "--base", "base"},
		{"diff", "--repo", r.Dir},
		{"diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--config-from", "head"},
	} {
		// No --kubeconfig: the repository's file is the only one named anywhere.
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
		var out, errOut bytes.Buffer
		code := run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
		if code != exitError || !strings.Contains(errOut.String(), "kubeconfig is not read from drift.yaml") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut.String())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%v: the repository's exec credential plugin ran", args)
		}
	}
}
