package rendercache_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
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

// secretValues are the values the Secrets of secretsRepo hold (as written, before
// any base64), none of which a kept rendering may hold in any form.
var secretValues = []string{"hunter2-hunter2", "k-1234567890", "-----BEGIN KEY-----\nabc\n-----END KEY-----\n", "t0ken-value", "pw-value-1", "from-values-1"}

// secretsRepo holds a Secret of each kind a rendering gets one from: a
// secretGenerator's literal, its env file and file, a Secret written in the
// repository (data and stringData), a chart's Secret from the release's values,
// and a chart's generated password; the second commit changes a ConfigMap beside
// them alone.
func secretsRepo(t *testing.T) (repo *source.Repo, first, second *source.Snapshot) {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"literal/kustomization.yaml":   "secretGenerator:\n- name: s\n  literals: [password=hunter2-hunter2]\n",
		"generated/kustomization.yaml": "secretGenerator:\n- name: env\n  envs: [app.env]\n- name: tls\n  files: [tls.key]\n",
		"generated/app.env":            "API_KEY=k-1234567890\n",
		"generated/tls.key":            "-----BEGIN KEY-----\nabc\n-----END KEY-----\n",
		"written/kustomization.yaml":   "resources: [secret.yaml]\n",
		"written/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: w}\ndata: {token: " + base64.StdEncoding.EncodeToString([]byte("t0ken-value")) +
			"}\nstringData: {pw: pw-value-1}\n",
		"chart/Chart.yaml":             "apiVersion: v2\nname: chart\nversion: 1.0.0\n",
		"chart/templates/secret.yaml":  "apiVersion: v1\nkind: Secret\nmetadata: {name: from-values}\ndata:\n  password: {{ .Values.password | b64enc }}\n",
		"random/Chart.yaml":            "apiVersion: v2\nname: random\nversion: 1.0.0\n",
		"random/templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: random}\ndata:\n  password: {{ randAlphaNum 16 | b64enc }}\n",
		"other/cm.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {value: one}\n",
	}
	return twoCommits(t, r, files, map[string]string{"other/cm.yaml": strings.ReplaceAll(files["other/cm.yaml"], "one", "two")})
}

// secretSpecs are the specs of secretsRepo's targets, by name.
var secretSpecs = map[string]render.Spec{
	"literal":   kustomizeSpec("literal"),
	"generated": kustomizeSpec("generated"),
	"written":   kustomizeSpec("written"),
	"chart":     {Path: "chart", Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "r", ReleaseNamespace: "default", Values: map[string]any{"password": "from-values-1"}}},
	"random":    {Path: "random", Renderer: render.RendererHelm, Helm: render.HelmOptions{ReleaseName: "r", ReleaseNamespace: "default"}},
}

// objectsJSON is every object of res, as JSON, for comparing renderings whole.
func objectsJSON(t *testing.T, res *render.Result) string {
	t.Helper()
	var out []string
	for _, o := range res.Objects {
		js, err := json.Marshal(o.Get().Object)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(js))
	}
	return strings.Join(out, "\n")
}

// holdsAny says whether data holds one of the values, as written or base64-encoded.
func holdsAny(data []byte, values []string) string {
	for _, v := range values {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), strings.ReplaceAll(v, "\n", `\n`)} {
			if strings.Contains(string(data), form) {
				return v
			}
		}
	}
	return ""
}

// TestAKeptRenderingHoldsNoSecretValueAndTakesItBack: a rendering with Secrets is
// kept with each of their values as a keyed hash, never the value in any form; the
// next run puts each value back from the files the rendering read and its options,
// and takes a rendering byte for byte the one it would have made; a Secret whose
// value is in none of them (a chart's generated password) is rendered again.
func TestAKeptRenderingHoldsNoSecretValueAndTakesItBack(t *testing.T) {
	repo, first, second := secretsRepo(t)
	dir, remove, err := cachedir.Temp()
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	run := func() *rendercache.Cache {
		return &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{}),
			Store: resultcache.OpenRenders(dir, "test build"), InputID: inputIDs(repo)}
	}
	holds := func(data []byte) bool {
		if v := holdsAny(data, secretValues); v != "" {
			t.Errorf("Save was given a record holding %q", v)
		}
		return false
	}

	c := run()
	for name, spec := range secretSpecs {
		res, err := c.RenderSnapshot(first, spec)
		if err != nil || len(res.Failures) > 0 {
			t.Fatalf("%s: %v %v", name, err, res.Failures)
		}
	}
	if taken, kept := c.Save(holds); taken != 0 || kept != len(secretSpecs) {
		t.Errorf("first run: taken %d, kept %d; want 0 and %d", taken, kept, len(secretSpecs))
	}
	c.Close()

	c = run()
	got := map[string]string{}
	for name, spec := range secretSpecs {
		res, err := c.RenderSnapshot(second, spec)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = objectsJSON(t, res)
	}
	if taken, _ := c.Save(holds); taken != len(secretSpecs)-1 {
		t.Errorf("second run: %d renderings taken, want %d (all but the generated password's)", taken, len(secretSpecs)-1)
	}
	c.Close()
	fresh := &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{})}
	for name, spec := range secretSpecs {
		res, err := fresh.RenderSnapshot(second, spec)
		if err != nil {
			t.Fatal(err)
		}
		want := objectsJSON(t, res)
		if name == "random" {
			if got[name] == want || !strings.Contains(got[name], `"password"`) {
				t.Errorf("the generated password is the same in two renderings:\n%s", got[name])
			}
			continue
		}
		if got[name] != want {
			t.Errorf("%s: taken\n%s\nrendered\n%s", name, got[name], want)
		}
	}

	// No file of the cache holds a value, in any form.
	packs := 0
	err = filepath.WalkDir(dir.Path(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".pack") {
			packs++
		}
		if v := holdsAny(data, secretValues); v != "" {
			t.Errorf("%s holds %q", p, v)
		}
		return nil
	})
	if err != nil || packs == 0 {
		t.Fatalf("%d packs (%v)", packs, err)
	}
}

// TestARenderingWhoseSecretValueShowsElsewhereIsNotKept: a Secret's value that
// the rendering also holds outside the Secret's data (an annotation, a ConfigMap)
// would be written in clear: such a rendering is not kept, nor one holding a string
// that reads as a placeholder; a Secret beside them that is neither is.
func TestARenderingWhoseSecretValueShowsElsewhereIsNotKept(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	commit, err := r.CommitFiles(map[string]string{
		"app/secret.yaml":   "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {pw: leaked-value-1}\n",
		"app/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {copy: leaked-value-1}\n",
		"looks/s.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {copy: \"\\0drift-secret:hmac-sha256:00\"}\n",
		"clean/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {pw: kept-value-1}\n",
	}, "first")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := source.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := repo.Snapshot(commit)
	if err != nil {
		t.Fatal(err)
	}
	dir, remove, err := cachedir.Temp()
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	c := &rendercache.Cache{Worker: worker.New(context.Background(), repo.Root, render.Limits{}),
		Store: resultcache.OpenRenders(dir, "test build"), InputID: inputIDs(repo)}
	for _, p := range []string{"app", "looks", "clean"} {
		if res, err := c.RenderSnapshot(snap, render.Spec{Path: p, Renderer: render.RendererPlain}); err != nil || len(res.Failures) > 0 {
			t.Fatalf("%v %v", err, res.Failures)
		}
	}
	if _, kept := c.Save(func([]byte) bool { return false }); kept != 1 {
		t.Errorf("%d renderings kept, want 1 (clean's): app holds a Secret's value outside it, looks a placeholder of its own", kept)
	}
	c.Close()
}
