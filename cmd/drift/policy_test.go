package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPolicyDecidesTheExitCode: without a policy a change exits 1 as kubectl diff
// does; --fail-on risk exits 3 and says why; a policy the report passes (no
// deletions) keeps 1; drift.yaml's failOn and risks.disable (a runner's file, trusted
// whole) judge the same way.
func TestPolicyDecidesTheExitCode(t *testing.T) {
	dir := demoRepo(t)
	args := []string{"diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main"}
	config := func(body string) string {
		p := filepath.Join(t.TempDir(), "drift.yaml")
		if err := os.WriteFile(p, []byte("targets: [{name: demo, path: .}]\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name   string
		extra  []string
		code   int
		failed bool
		note   string
	}{
		{"no policy", nil, 1, false, ""},
		{"fail on deletes, none", []string{"--fail-on", "delete"}, 1, false, ""},
		{"fail on risk", []string{"--fail-on", "risk"}, 3, true, "Policy failed (fail on risk): 2 risky objects."},
		{"fail on deletes (old flag) and changes", []string{"--fail-on-deletes", "--fail-on=change"}, 3, true, "Policy failed (fail on delete, change): 4 changes."},
		{"drift.yaml failOn, one rule off", []string{"--config", config("failOn: [risk]\nrisks: {disable: [pod-rollout]}\n")}, 3, true, "Policy failed (fail on risk): 1 risky object."},
		{"drift.yaml failOn, both rules off", []string{"--config", config("failOn: [risk]\nrisks: {disable: [pod-rollout, secret-changed]}\n")}, 1, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, o := driftJSON(t, append(append([]string{}, args...), c.extra...)...)
			if o.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", o.code, c.code, o.stderr)
			}
			if rep.PolicyFailed() != c.failed || rep.PolicyNote() != c.note {
				t.Errorf("policy %+v, note %q; want failed=%v %q", rep.Policy, rep.PolicyNote(), c.failed, c.note)
			}
		})
	}
	o := drift(t, append(append([]string{}, args...), "--fail-on", "risky")...)
	if o.code != 2 || !strings.Contains(o.stderr, `--fail-on: "risky" is not one of error, risk, delete, change`) {
		t.Errorf("an unknown --fail-on value: exit %d\n%s", o.code, o.stderr)
	}
	o = drift(t, append(append([]string{}, args...), "--config", config("risks: {disable: [pod-rolout]}\n"))...)
	if o.code != 2 || !strings.Contains(o.stderr, `risks.disable: unknown risk rule "pod-rolout"`) {
		t.Errorf("an unknown risk rule: exit %d\n%s", o.code, o.stderr)
	}
}

// TestReportViews: -o changes lists the fields, -U 0 leaves no context, --color always
// colours a file, and --html writes the page beside the report.
func TestReportViews(t *testing.T) {
	dir := demoRepo(t)
	args := []string{"diff", "--repo", dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main"}
	o := drift(t, append(append([]string{}, args...), "-o", "changes")...)
	for _, want := range []string{"spec.template.spec.containers[name=web].image\n      - nginx:1.25\n      + nginx:1.27", "data.password\n      - *** (before)\n      + *** (after)", "risk (pod-rollout)"} {
		if o.code != 1 || !strings.Contains(o.stdout, want) {
			t.Errorf("-o changes lacks %q (exit %d):\n%s", want, o.code, o.stdout)
		}
	}
	rep, _ := driftJSON(t, append(append([]string{}, args...), "-U", "0")...)
	for _, tg := range rep.Targets {
		for _, ob := range tg.Objects {
			for _, l := range strings.Split(ob.Diff, "\n") {
				if strings.HasPrefix(l, " ") {
					t.Errorf("-U 0: a context line in %s: %q", ob.Title(), l)
				}
			}
		}
	}
	page := filepath.Join(t.TempDir(), "html", "report.html")
	o = drift(t, append(append([]string{}, args...), "--color", "always", "--html", page)...)
	if !strings.Contains(o.stdout, "\x1b[") {
		t.Errorf("--color always wrote no colour")
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`<details class="obj `).FindAll(html, -1)); n != 9 || strings.Contains(string(html), "correct-horse") {
		t.Errorf("the HTML report holds %d objects, want 9 (or a secret)", n)
	}
	o = drift(t, append(append([]string{}, args...), "--color", "sometimes")...)
	if o.code != 2 || !strings.Contains(o.stderr, `unknown --color "sometimes"`) {
		t.Errorf("--color sometimes: exit %d %s", o.code, o.stderr)
	}
}
