package rendercache_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/resultcache"
	"github.com/drift-gitops/drift/internal/source"
)

// reuseRepo is two kustomizations over a shared component, at two commits: the
// second changes app a's ConfigMap alone.
func reuseRepo(t *testing.T) (repo *source.Repo, first, second *source.Snapshot) {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	app := func(name, value string) map[string]string {
		return map[string]string{
			name + "/kustomization.yaml": "resources: [cm.yaml]\ncomponents: [../common]\n",
			name + "/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {value: " + value + "}\n",
		}
	}
	files := map[string]string{"common/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs: {team: a}\n",
		"secret/kustomization.yaml": "secretGenerator:\n- name: s\n  literals: [password=hunter2-hunter2]\n"}
	for k, v := range app("a", "one") {
		files[k] = v
	}
	for k, v := range app("b", "one") {
		files[k] = v
	}
	return twoCommits(t, r, files, map[string]string{"a/cm.yaml": app("a", "two")["a/cm.yaml"]})
}

// twoCommits commits files, then the edits of next, to r, and opens both commits.
func twoCommits(t *testing.T, r *gitfixture.Repo, files, next map[string]string) (repo *source.Repo, first, second *source.Snapshot) {
	t.Helper()
	c1, err := r.CommitFiles(files, "first")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := r.CommitFiles(next, "second")
	if err != nil {
		t.Fatal(err)
	}
	if repo, err = source.Open(r.Dir); err != nil {
		t.Fatal(err)
	}
	if first, err = repo.Snapshot(c1); err != nil {
		t.Fatal(err)
	}
	if second, err = repo.Snapshot(c2); err != nil {
		t.Fatal(err)
	}
	return repo, first, second
}

// changedBetween is rendercache.Cache.Changed over repo, as plan gives it.
func changedBetween(t *testing.T, repo *source.Repo) func(from, to string) ([]string, bool) {
	return func(from, to string) ([]string, bool) {
		f, err := repo.Snapshot(from)
		if err != nil {
			return nil, false
		}
		g, err := repo.Snapshot(to)
		if err != nil {
			return nil, false
		}
		files, err := source.Files(f, g)
		if err != nil {
			t.Error(err)
			return nil, false
		}
		var out []string
		for _, c := range files {
			out = append(out, c.Path)
		}
		return out, true
	}
}

// inputIDs is rendercache.Cache.InputID over repo's commits.
func inputIDs(repo *source.Repo) func(commit, path string, read source.Read) (string, bool) {
	return func(commit, p string, read source.Read) (string, bool) {
		s, err := repo.Snapshot(commit)
		if err != nil {
			return "", false
		}
		return s.InputID(p, read)
	}
}

// values are the rendered ConfigMaps' values and labels, for comparing renderings.
func values(t *testing.T, res *render.Result) string {
	t.Helper()
	var out []string
	for _, o := range res.Objects {
		u := o.Get()
		out = append(out, u.GetKind()+"/"+u.GetName()+" "+u.GetLabels()["team"]+" "+strings.Join(slices.Sorted(func(yield func(string) bool) {
			data, _ := u.Object["data"].(map[string]any)
			for k, v := range data {
				if !yield(k + "=" + v.(string)) {
					return
				}
			}
		}), ","))
	}
	return strings.Join(out, "; ")
}

func kustomizeSpec(dir string) render.Spec {
	return render.Spec{Path: dir, Renderer: render.RendererKustomize}
}

// TestARenderingTheChangeDoesNotTouchIsTakenFromTheOtherRef: after Equivalent, a
// spec that reads nothing the change touches is rendered once for both refs; one
// that reads a changed file is rendered in each, and differs.
func TestARenderingTheChangeDoesNotTouchIsTakenFromTheOtherRef(t *testing.T) {
	repo, first, second := reuseRepo(t)
	c := &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{})}
	changed, _ := changedBetween(t, repo)(first.Commit, second.Commit)
	c.Equivalent(first.Commit, second.Commit, changed)

	b2, err := c.RenderSnapshot(second, kustomizeSpec("b"))
	if err != nil {
		t.Fatal(err)
	}
	b1, err := c.RenderSnapshot(first, kustomizeSpec("b"))
	if err != nil {
		t.Fatal(err)
	}
	if b1 != b2 || c.Reused() != 1 {
		t.Errorf("b, untouched: rendered again (reused %d)", c.Reused())
	}
	a2, err := c.RenderSnapshot(second, kustomizeSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	a1, err := c.RenderSnapshot(first, kustomizeSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Reused() != 1 || values(t, a1) == values(t, a2) {
		t.Errorf("a, changed: taken from the other ref (reused %d): %s / %s", c.Reused(), values(t, a1), values(t, a2))
	}
	if got, want := values(t, a1), "ConfigMap/a a value=one"; got != want {
		t.Errorf("a at the first commit: %s, want %s", got, want)
	}

	// RenderBoth renders every spec in both.
	both := &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{}), RenderBoth: true}
	both.Equivalent(first.Commit, second.Commit, changed)
	x, _ := both.RenderSnapshot(second, kustomizeSpec("b"))
	y, _ := both.RenderSnapshot(first, kustomizeSpec("b"))
	if x == y || both.Reused() != 0 || values(t, x) != values(t, y) {
		t.Errorf("RenderBoth: reused %d", both.Reused())
	}
}

// TestAKeptRenderingIsTakenWhereNothingItReadChanged: a run keeps its renderings
// (but those its caller says hold a secret) with the git object of every path each
// read; the next run, at a later commit, takes those whose paths are the same
// objects, renders the rest, and the renderings it takes are those it would have
// made.
func TestAKeptRenderingIsTakenWhereNothingItReadChanged(t *testing.T) {
	repo, first, second := reuseRepo(t)
	dir, remove, err := cachedir.Temp()
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	run := func() *rendercache.Cache {
		return &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{}),
			Store: resultcache.OpenRenders(dir, "test build"), InputID: inputIDs(repo)}
	}
	holdsSecret := func(data []byte) bool { return strings.Contains(string(data), `"kind":"Secret"`) }

	c := run()
	for _, d := range []string{"a", "b", "secret"} {
		if _, err := c.RenderSnapshot(first, kustomizeSpec(d)); err != nil {
			t.Fatal(err)
		}
	}
	if taken, kept := c.Save(holdsSecret); taken != 0 || kept != 2 {
		t.Errorf("first run: taken %d, kept %d; want 0 and 2 (the Secret's rendering is not kept)", taken, kept)
	}

	c = run()
	got := map[string]string{}
	for _, d := range []string{"a", "b", "secret"} {
		res, err := c.RenderSnapshot(second, kustomizeSpec(d))
		if err != nil {
			t.Fatal(err)
		}
		got[d] = values(t, res)
	}
	if taken, _ := c.Save(holdsSecret); taken != 1 {
		t.Errorf("second run: %d renderings taken, want 1 (b's)", taken)
	}
	fresh := &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{})}
	for d, v := range got {
		res, err := fresh.RenderSnapshot(second, kustomizeSpec(d))
		if err != nil {
			t.Fatal(err)
		}
		if want := values(t, res); v != want {
			t.Errorf("%s: %s, a fresh rendering is %s", d, v, want)
		}
	}

	// The second run kept b's rendering again beside a's: its record alone serves a
	// run at its commit.
	c.Close()
	packs, _ := filepath.Glob(filepath.Join(dir.Path(), "*", "renders", "*", "*.pack"))
	slices.Sort(packs)
	if len(packs) != 2 {
		t.Fatalf("packs: %q", packs)
	}
	if err := os.Remove(packs[0]); err != nil {
		t.Fatal(err)
	}
	c = run()
	for _, d := range []string{"a", "b"} {
		if _, err := c.RenderSnapshot(second, kustomizeSpec(d)); err != nil {
			t.Fatal(err)
		}
	}
	if taken, _ := c.Save(holdsSecret); taken != 2 {
		t.Errorf("a run with the second run's record alone took %d renderings, want 2", taken)
	}
	c.Close()

	// Another build of drift reads none of it.
	other := &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{}),
		Store: resultcache.OpenRenders(dir, "another build"), InputID: inputIDs(repo)}
	if _, err := other.RenderSnapshot(second, kustomizeSpec("b")); err != nil {
		t.Fatal(err)
	}
	if taken, _ := other.Save(holdsSecret); taken != 0 {
		t.Errorf("another build took %d renderings", taken)
	}
}
