package main

import (
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/sopsdoc/sopstest"
)

// serverMadeUp matches what an ephemeral server makes up anew for each object it
// stores (the base's objects are loaded for real every run).
var serverMadeUp = regexp.MustCompile(`("uid": "[0-9a-f-]{36}"|"creationTimestamp": "[0-9TZ:-]+"|uid: [0-9a-f-]{36}|creationTimestamp: "[0-9TZ:-]+")`)

// TestAOneAppChangeReportsAsARunThatRendersEverything: on a fleet laid out as home
// labs lay theirs out (gitfixture.Fleet: Flux Kustomizations and HelmReleases over a
// shared chart and component, SOPS Secrets, cluster-wide substitution variables),
// each pull request previewed on an ephemeral server gives, byte for byte, the report
// of a run that renders every target in both refs (DRIFT_RENDER_REUSE=off): a
// change to one app previews that app, and a change to what many share previews
// each of them.
func TestAOneAppChangeReportsAsARunThatRendersEverything(t *testing.T) {
	key := sopstest.NewKey(t)
	t.Setenv("SOPS_AGE_KEY", key.Identity)
	cacheDir := t.TempDir()
	t.Setenv("DRIFT_CACHE_DIR", cacheDir)
	fleet := gitfixture.Fleet{Namespaces: 2, AppsPerNamespace: 4, Seal: func(plain []byte) ([]byte, error) {
		return sopstest.Seal(plain, "yaml", key, "^(data|stringData)$")
	}}
	files, err := fleet.Files()
	if err != nil {
		t.Fatal(err)
	}
	r := repo(t, files)
	edit := func(app string, n int, secret bool) map[string]string {
		t.Helper()
		files, err := fleet.Edit(app, n, secret)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	for i, c := range []struct {
		name  string
		files map[string]string
		// previewed are the targets previewed.
		previewed []string
	}{
		// The Kustomization that applies the HelmRelease renders it: both change.
		{"a HelmRelease's values", edit("ns-00/app-000", 1, false), []string{"Kustomization/flux-system/app-000", "HelmRelease/ns-00/app-000"}},
		{"a plain app's manifest", edit("ns-01/app-005", 2, false), []string{"Kustomization/flux-system/app-005"}},
		{"an app's SOPS Secret", edit("ns-00/app-000", 3, true), []string{"Kustomization/flux-system/app-000"}},
		{"the shared chart", map[string]string{"charts/app/values.yaml": "image: {repository: ghcr.io/example/app, tag: \"1.0.0\"}\nreplicas: 1\nport: 9090\nenv: {}\n"},
			[]string{"HelmRelease/ns-00/app-000", "HelmRelease/ns-00/app-002", "HelmRelease/ns-01/app-004", "HelmRelease/ns-01/app-006"}},
		{"the shared component", map[string]string{"components/common/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs: {app.kubernetes.io/part-of: homelab}\n"},
			[]string{"Kustomization/flux-system/app-000", "Kustomization/flux-system/app-001", "Kustomization/flux-system/app-002", "Kustomization/flux-system/app-003",
				"Kustomization/flux-system/app-004", "Kustomization/flux-system/app-005", "Kustomization/flux-system/app-006", "Kustomization/flux-system/app-007"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := r.CommitFiles(c.files, c.name); err != nil {
				t.Fatal(err)
			}
			args := []string{"diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "main~1", "--ref", "main"}
			t.Setenv("DRIFT_RENDER_REUSE", "")
			rep, reused := driftJSON(t, args...)
			t.Setenv("DRIFT_RENDER_REUSE", "off")
			_, all := driftJSON(t, args...)
			if reused.code != exitChanges || !rep.Complete {
				t.Fatalf("exit %d, complete %v\n%s", reused.code, rep.Complete, reused.stderr)
			}
			// The runs before this one (after the first) kept their renderings: what the
			// change does not touch is taken from the cache, as the run says on stderr.
			if m := tookFromCache.FindStringSubmatch(reused.stderr); i > 0 && (m == nil || m[1] == "0") {
				t.Errorf("nothing taken from the cache:\n%s", reused.stderr)
			}
			if a, b := serverMadeUp.ReplaceAllString(reused.stdout, ""), serverMadeUp.ReplaceAllString(all.stdout, ""); a != b {
				t.Errorf("the report differs from a run that renders everything:\n%s\n%s\n---- rendering everything:\n%s\n%s", a, reused.stderr, b, all.stderr)
			}
			var previewed []string
			for _, tg := range rep.Targets {
				if tg.Skipped == "" {
					previewed = append(previewed, tg.Name)
				}
				if tg.Skipped == "" && !slices.Contains(c.previewed, tg.Name) {
					t.Errorf("target %s is previewed, which the change does not touch", tg.Name)
				}
				for _, o := range tg.Objects {
					if o.Category == report.Error {
						t.Errorf("target %s: %s %s: %s", tg.Name, o.Kind, o.Name, o.Error)
					}
				}
			}
			for _, name := range c.previewed {
				if !slices.Contains(previewed, name) {
					t.Errorf("%s is not previewed; previewed: %v", name, previewed)
				}
			}
			if !slices.ContainsFunc(rep.Targets, func(tg report.Target) bool { return tg.Skipped != "" }) {
				t.Error("every target is previewed: nothing was left as unchanged")
			}
		})
	}

	// The cache holds renderings, and no secret value in any form: the SOPS
	// Secrets' values (decrypted for the previews) nor the cluster's variables.
	records := 0
	err = filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(p, "/renders/") {
			records++
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, v := range []string{"password-0", "password-3", "lab.example.net"} {
			if strings.Contains(string(data), v) || strings.Contains(string(data), base64.StdEncoding.EncodeToString([]byte(v))) {
				t.Errorf("%s holds the secret value %q", p, v)
			}
		}
		return nil
	})
	if err != nil || records == 0 {
		t.Errorf("the cache holds %d renderings (%v)", records, err)
	}
}

// tookFromCache reads how many renderings a run took from drift's cache.
var tookFromCache = regexp.MustCompile(`(\d+) taken from the cache`)
