package plan

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/render/rendercache"
)

// application is an Argo CD Application of the repository https://git.example/ops,
// with the given ignoreDifferences.
func application(name, path, ignore string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: " + name + ", namespace: argocd}\nspec:\n" +
		"  source: {repoURL: https://git.example/ops, path: " + path + "}\n" +
		"  destination: {server: https://kubernetes.default.svc, namespace: " + name + "}\n" + ignore
}

// A pull request's Application cannot ignore what it changes: ignoreDifferences come
// from the base's Application, as drift.yaml's rules do, and the target says so; a new
// Application brings none. With --config-from head (a trusted run) the change's apply.
func TestAPullRequestCannotIgnoreWhatItChanges(t *testing.T) {
	t.Parallel()
	g, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: blue}\n"
	hide := "  ignoreDifferences: [{kind: ConfigMap, jsonPointers: [/data]}]\n"
	if _, err := g.CommitFiles(map[string]string{
		"apps/web.yaml": application("web", "web", ""), "web/cm.yaml": cm,
	}, "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Git("remote", "add", "origin", "https://git.example/ops.git"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Git("checkout", "-q", "-b", "change"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitFiles(map[string]string{
		"apps/web.yaml": application("web", "web", hide), "web/cm.yaml": strings.Replace(cm, "blue", "green", 1),
		"apps/api.yaml": application("api", "web", hide),
	}, "change"); err != nil {
		t.Fatal(err)
	}
	open := func(from string) map[string]Target {
		p, err := Open(t.Context(), Request{Repo: openRepo(t, g.Dir), Ref: "change", Base: "main", Config: ConfigSource{From: from}, Appliers: appliers.All(),
			Cache: &rendercache.Cache{}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Target{}
		for _, tg := range p.Targets {
			out[tg.Name] = tg
		}
		return out
	}
	ts := open(ConfigFromBase)
	for _, name := range []string{"Application/web", "Application/api"} {
		tg := ts[name]
		if len(tg.Rules.Ignore) != 0 || len(tg.Notes) != 1 || !strings.Contains(tg.Notes[0], "ignoreDifferences are not applied") {
			t.Errorf("%s: ignore %+v notes %q", name, tg.Rules.Ignore, tg.Notes)
		}
	}
	if tg := open(ConfigFromHead)["Application/web"]; len(tg.Rules.Ignore) != 1 || len(tg.Notes) != 0 {
		t.Errorf("--config-from head: ignore %+v notes %q", tg.Rules.Ignore, tg.Notes)
	}
}
