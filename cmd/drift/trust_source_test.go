package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/github/githubtest"
)

// TestWorkTreeTokenNeverLeaves is the checkout-token attack: actions/checkout leaves
// the token in .git/config, and a pull request's kustomization generates ConfigMaps
// from a symlink to that file and from a .gitignored file. Previewed in work-tree mode
// (the Action's default) with a pull request comment, the token appears in no output,
// no file and no request body GitHub received; both generators are refused, naming
// the file, and the healthy target is still reported.
func TestWorkTreeTokenNeverLeaves(t *testing.T) {
	srv := githubtest.New(ghToken)
	defer srv.Close()
	summary := actionsEnv(t, srv, 7)
	ns := namespace(t)
	const token = "ghs_CHECKOUT_TOKEN_0123456789"
	header := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
	r := repo(t, map[string]string{
		".gitignore": "local.env\n",
		"drift.yaml": sub(`targets:
  - {name: leak, path: leak, namespace: NS}
  - {name: ignored, path: ignored, namespace: NS}
  - {name: fine, path: fine, namespace: NS}
`, ns),
		"leak/kustomization.yaml":    "configMapGenerator:\n  - name: stolen\n    files: [cfg]\n",
		"ignored/kustomization.yaml": "configMapGenerator:\n  - name: env\n    envs: [../local.env]\n",
		"fine/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {k: v}\n",
	})
	if err := os.Symlink("../.git/config", filepath.Join(r.Dir, "leak", "cfg")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "local.env"), []byte("TOKEN="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic "+header); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.txt")
	jsonOut := filepath.Join(t.TempDir(), "report.json")
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--github-comment", "--json-report", jsonOut)
	text := drift(t, "diff", "--repo", r.Dir, "-o", "markdown", "--out", out)
	if o.code != exitError || text.code != exitError {
		t.Fatalf("exit %d and %d, want 2 (two targets refused)\n%s", o.code, text.code, o.stderr)
	}
	for _, tg := range rep.Targets {
		switch tg.Name {
		case "fine":
			if len(tg.Objects) != 1 || tg.Objects[0].Category != "add" {
				t.Errorf("the healthy target: %+v", tg.Objects)
			}
		case "leak", "ignored":
			want := map[string]string{"leak": "leak/cfg", "ignored": "local.env"}[tg.Name]
			if len(tg.Objects) != 1 || tg.Objects[0].ErrorReason != "refused" || !strings.Contains(tg.Objects[0].Error, want) {
				t.Errorf("target %s: %+v", tg.Name, tg.Objects)
			}
		}
	}
	var seen []string
	add := func(name, s string) { seen = append(seen, name+"\x00"+s) }
	add("stdout", o.stdout+text.stdout)
	add("stderr", o.stderr+text.stderr)
	for _, f := range []string{out, jsonOut, summary} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		add(f, string(data))
	}
	for _, req := range srv.Received {
		add(req.Method+" "+req.Path, req.Body)
	}
	if len(srv.Comments(7)) != 1 {
		t.Fatalf("no comment posted: %v", srv.Requests)
	}
	for _, s := range seen {
		name, body, _ := strings.Cut(s, "\x00")
		for _, secret := range []string{token, header, "extraheader", base64.StdEncoding.EncodeToString([]byte(token))} {
			if strings.Contains(body, secret) {
				t.Errorf("%s holds %q", name, secret)
			}
		}
	}
}

// TestSubmoduleIsAnErrorNotASilentGap: a target with a submodule inside, read from a
// commit, reports the submodule instead of previewing the rest as if complete.
func TestSubmoduleIsAnErrorNotASilentGap(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{"apps/cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n", ns)})
	sha, err := r.Git("rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("update-index", "--add", "--cacheinfo", "160000,"+sha+",apps/vendored"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Git("commit", "-q", "-m", "submodule"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "HEAD", "--path", "apps")
	if o.code != exitError || rep.Complete {
		t.Fatalf("exit %d complete %v, want an incomplete report", o.code, rep.Complete)
	}
	if got := find(t, rep, "ConfigMap", "a"); got.Category != "add" {
		t.Errorf("the rest of the target: %s", got.Category)
	}
	var named bool
	for _, obj := range rep.Targets[0].Objects {
		named = named || (obj.ErrorReason == "refused" && strings.Contains(obj.Error, "apps/vendored is a git submodule"))
	}
	if !named {
		t.Errorf("the submodule is not named: %+v", rep.Targets[0].Objects)
	}
}
