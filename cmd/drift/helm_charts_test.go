package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/report"
)

// Real charts, as published, fetched through the Go module proxy (their repositories
// are served there as modules) at pinned versions, so the test sees what users run:
// podinfo's Redis ConfigMap ends its document with a block scalar, grafana keeps its
// admin password with lookup and ships helm test hooks.
var realCharts = []struct {
	name, module, dir string
	values            map[string]any
	// holds is what the chart must render for the test to mean something.
	holds []string
}{
	{name: "podinfo", module: "github.com/stefanprodan/podinfo@v1.8.1-0.20250910200901-e86405a8674e", dir: "charts/podinfo",
		values: map[string]any{"redis": map[string]any{"enabled": true}}, holds: []string{"redis.conf: |"}},
	{name: "grafana", module: "github.com/grafana-community/helm-charts@v0.0.0-20260829030558-dbf9f4fb5fa1", dir: "charts/grafana",
		holds: []string{`lookup "v1" "Secret"`, `"helm.sh/hook": {{ .Values.testFramework.hookType | default "test" }}`}},
}

// chartFrom downloads module through the Go module proxy and returns the chart's
// files, keyed by their path below dir.
func chartFrom(t *testing.T, module, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s (the Go module proxy serves the chart's repository): %v\n%s", module, err, out)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(m.Dir, dir)
	files := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRealChartsShowNoChangeRightAfterHelm: each chart installed with the Helm SDK's
// install action, previewed under the helm applier, upgraded with the Helm SDK's
// upgrade action. What the preview showed is what the upgrade did (every added line
// of every diff is in the live object after the upgrade; grafana's first upgrade
// really changes its checksum/secret annotation, as its password helper quotes a new
// password but not a kept one), and right after the upgrade the preview finds
// nothing to change: no block scalar losing its newline, no hook shown as an
// addition, no lookup-kept Secret re-randomized. Every preview is run twice and must
// be byte-identical.
func TestRealChartsShowNoChangeRightAfterHelm(t *testing.T) {
	for _, c := range realCharts {
		t.Run(c.name, func(t *testing.T) {
			ns := namespace(t)
			chart := chartFrom(t, c.module, c.dir)
			all := strings.Join(mapValues(chart), "\n")
			for _, h := range c.holds {
				if !strings.Contains(all, h) {
					t.Fatalf("the chart no longer has %q: pick a version that does", h)
				}
			}
			values, err := yaml.Marshal(c.values)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"drift.yaml": "targets:\n- {name: " + c.name + ", path: chart, namespace: " + ns +
				", applier: helm, helm: {releaseName: " + c.name + ", valuesFiles: [drift-values.yaml]}}\n",
				"chart/drift-values.yaml": string(values)}
			for p, data := range chart {
				files["chart/"+p] = data
			}
			r := repo(t, files)
			preview := func() (*report.Report, outcome) {
				rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
				if _, again := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main"); again.stdout != o.stdout {
					t.Fatalf("two runs differ:\n%s\n---\n%s", o.stdout, again.stdout)
				}
				if o.code == 2 || !rep.Complete {
					t.Fatalf("preview failed (exit %d):\n%s\n%s", o.code, o.stdout, o.stderr)
				}
				return rep, o
			}

			helmRunValues(t, r.Dir, ns, c.name, false, c.values)
			predicted, _ := preview()
			helmRunValues(t, r.Dir, ns, c.name, true, c.values)
			for _, tg := range predicted.Targets {
				for _, o := range tg.Objects {
					if o.Category == report.Unchanged {
						continue
					}
					if o.Category != report.Modify {
						t.Errorf("%s: %s after helm install, want only modifications helm upgrade makes", o.Title(), o.Category)
						continue
					}
					live := kubectlGetYAML(t, o.Kind, o.Namespace, o.Name)
					for _, line := range strings.Split(o.Diff, "\n") {
						if added, ok := strings.CutPrefix(line, "+"); ok && !strings.HasPrefix(line, "+++") && !containsLine(live, added) {
							t.Errorf("%s: drift predicted %q, helm upgrade left:\n%s", o.Title(), added, live)
						}
					}
				}
			}
			if _, o := preview(); o.code != 0 {
				t.Fatalf("right after helm upgrade: exit %d, want 0 (no change)\n%s", o.code, o.stdout)
			}
		})
	}
}

func kubectlGetYAML(t *testing.T, kind, ns, name string) string {
	t.Helper()
	out, err := exec.Command("kubectl", "--kubeconfig", env.Kubeconfig, "get", "-n", ns, kind, name, "-o", "yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get %s %s/%s: %v\n%s", kind, ns, name, err, out)
	}
	return string(out)
}

// containsLine reports whether text has a line equal to line, indentation aside.
func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == strings.TrimSpace(line) {
			return true
		}
	}
	return false
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
