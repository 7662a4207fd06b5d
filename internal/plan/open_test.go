package plan

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/source"
)

// A pull request that changes one target's files: Open reads drift.yaml from the
// base, plans both targets and skips the one whose inputs are unchanged; a name that
// selects nothing and a base that does not exist are errors saying so.
func TestOpenPlansAndSelectsByChange(t *testing.T) {
	t.Parallel()
	g, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cm := func(name, color string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {color: " + color + "}\n"
	}
	if _, err := g.CommitFiles(map[string]string{
		"drift.yaml":    "targets:\n- {name: web, path: web}\n- {name: api, path: api}\n",
		"web/cm.yaml":   cm("web", "blue"),
		"api/cm.yaml":   cm("api", "blue"),
		"other/cm.yaml": cm("other", "blue"),
	}, "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Git("checkout", "-q", "-b", "change"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitFiles(map[string]string{"web/cm.yaml": cm("web", "green")}, "change web"); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	req := func() Request {
		return Request{Appliers: appliers.All(),
			Repo: openRepo(t, g.Dir), Ref: "change", Base: "main",
			Config: ConfigSource{From: ConfigFromBase},
			Warnf:  func(f string, a ...any) { warnings = append(warnings, f) },
			Cache:  &rendercache.Cache{},
		}
	}

	p, err := Open(t.Context(), req())
	if err != nil {
		t.Fatal(err)
	}
	if p.Ref != "change" || p.Head == nil || p.Base == nil || p.Head.Commit == p.Base.Commit || p.Cache == nil {
		t.Fatalf("plan: ref %q, head %v, base %v, cache %v", p.Ref, p.Head, p.Base, p.Cache)
	}
	got := map[string]string{}
	for _, tg := range p.Targets {
		got[tg.Name] = tg.Skipped
	}
	if len(got) != 2 || got["web"] != "" || !strings.Contains(got["api"], "unchanged") {
		t.Errorf("targets (name: skipped): %q; want web previewed and api skipped as unchanged", got)
	}

	named := req()
	named.Names = []string{"db-*"}
	if _, err := Open(t.Context(), named); err == nil || !strings.Contains(err.Error(), "names no target; the targets are: api, web") {
		t.Errorf("--target db-*: %v", err)
	}
	noBase := req()
	noBase.Base = "gone"
	if _, err := Open(t.Context(), noBase); err == nil || !strings.HasPrefix(err.Error(), "--base: ") {
		t.Errorf("--base gone: %v", err)
	}
	paths := req()
	paths.Paths = []string{"other"}
	if p, err := Open(t.Context(), paths); err != nil || len(p.Targets) != 1 || p.Targets[0].Name != "other" {
		t.Errorf("a path asked for is the one target: %v %+v", err, p)
	}
	missing := req()
	missing.Paths = []string{"nowhere"}
	if _, err := Open(t.Context(), missing); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("a path the ref does not hold: %v", err)
	}
}

// drift detect previews the default branch when no ref is given.
func TestOpenDefaultRef(t *testing.T) {
	t.Parallel()
	g, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitFiles(map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}, "one"); err != nil {
		t.Fatal(err)
	}
	p, err := Open(t.Context(), Request{Repo: openRepo(t, g.Dir), DefaultRef: true, Appliers: appliers.All(), Cache: &rendercache.Cache{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Ref == "" || p.Base != nil || len(p.Targets) != 1 || p.Targets[0].Skipped != "" {
		t.Errorf("default ref %q, base %v, targets %+v", p.Ref, p.Base, p.Targets)
	}
}

// A Flux target's kustomization reads a file above its directory, as Flux allows: it
// builds, and the file is one of its inputs, so a pull request that changes only that
// file selects the target; a kubectl target's build refuses the file, as kustomize
// build does; a Flux directory without a kustomization is built with kustomize.
func TestAFluxTargetsInputsAreWhatFluxBuildsRead(t *testing.T) {
	t.Parallel()
	g, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitFiles(map[string]string{
		"apps/staging/kustomization.yaml": "resources: [../common/cm.yaml]\n",
		"apps/common/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: common}\n",
		"clusters/staging/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: top}\n",
	}, "base"); err != nil {
		t.Fatal(err)
	}
	repo, err := source.Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	cache := &rendercache.Cache{}
	reg := appliers.All()
	for _, tc := range []struct {
		applier        applier.Name
		path, renderer string
		reads          bool
	}{
		{applier.Flux, "apps/staging", render.RendererKustomize, true},
		{applier.Kubectl, "apps/staging", render.RendererKustomize, false},
		{applier.Flux, "clusters/staging", render.RendererKustomize, false},
		{applier.Kubectl, "clusters/staging", render.RendererPlain, false},
	} {
		targets := []Target{{Applier: reg.Get(tc.applier), Spec: render.Spec{Path: tc.path}}}
		Resolve(targets, head, nil)
		tg := targets[0]
		if spec := tg.Spec; spec.Renderer != tc.renderer || spec.AsFlux != (tc.applier == applier.Flux) {
			t.Errorf("%s %s: spec %+v, want renderer %s", tc.applier, tc.path, spec, tc.renderer)
		}
		res, err := cache.RenderSnapshot(head, tg.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if builds := len(res.Failures) == 0; builds != (tc.applier == applier.Flux || tc.renderer == render.RendererPlain) {
			t.Errorf("%s %s: failures %+v", tc.applier, tc.path, res.Failures)
		}
		if got := InputsOf(tg, head, cache).Touched("apps/common/cm.yaml"); tc.reads && !got {
			t.Errorf("%s %s: apps/common/cm.yaml is not an input", tc.applier, tc.path)
		}
	}
}

// openRepo opens the git repository at dir, as drift's commands do before they plan.
func openRepo(t *testing.T, dir string) *source.Repo {
	t.Helper()
	repo, err := source.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}
