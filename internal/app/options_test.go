package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitlab"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// testConfig is a Config reading env as its environment.
func testConfig(env map[string]string) *Config {
	cfg := NewConfig(nil, nil)
	cfg.Getenv = func(k string) string { return env[k] }
	return cfg
}

// given says the flags named were given on the command line.
func given(names ...string) func(string) bool {
	return func(n string) bool {
		for _, g := range names {
			if g == n {
				return true
			}
		}
		return false
	}
}

// --applier and its old name --apply-mode: one of them, naming an applier.
func TestApplierFlagsAreValidated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		applier, applyMode string
		want               string // the applier the overrides carry; "" none; "error"
	}{
		{"", "", ""},
		{"flux", "", "flux"},
		{"", "server", "kubectl-server-side"},
		{"", "client", "kubectl"},
		{"fluxcd", "", "error"},
		{"client", "", "error"},
		{"kubectl", "client", "error"},
		{"", "ssa", "error"},
	} {
		o := &Run{Output: "text", Concurrency: 32, MaxTargets: 1, Timeout: 1, Applier: c.applier, ApplyMode: c.applyMode, Report: Report{Color: "auto"}}
		o.cfg = testConfig(nil)
		err := o.validate(plan.ConfigFromBase)
		switch {
		case c.want == "error" && err == nil:
			t.Errorf("%+v: no error", c)
		case c.want != "error" && err != nil:
			t.Errorf("%+v: %v", c, err)
		case c.want != "error" && string(o.overrides().Applier) != c.want:
			t.Errorf("%+v: overrides name applier %q, want %q", c, o.overrides().Applier, c.want)
		}
	}
}

// TestEveryGitLabSettingReachesPublish: each setting of the GitLab side is in what
// publish is asked to do; one forge at a time.
func TestEveryGitLabSettingReachesPublish(t *testing.T) {
	t.Parallel()
	g := GitLab{Note: true, Status: false, Token: "tok", Project: "acme/gitops", MR: 7, APIURL: "https://gitlab.example/api/v4", HeadSHA: "abc", Dotenv: "d.env", Issue: true}
	var got publish.Options
	if err := g.apply(&got); err != nil {
		t.Fatal(err)
	}
	want := publish.Options{Forge: publish.GitLab, Comment: true, Check: false, Issue: true, Dotenv: "d.env",
		GitLab: gitlab.Context{Token: "tok", Project: "acme/gitops", MR: 7, APIURL: "https://gitlab.example/api/v4", HeadSHA: "abc"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options = %+v\nwant      %+v", got, want)
	}
	if err := g.apply(&publish.Options{Comment: true}); err == nil || !strings.Contains(err.Error(), "give one forge's") {
		t.Errorf("both forges: %v", err)
	}
}

// gitlabRun is a run in the environment env with the flags named given.
func gitlabRun(env map[string]string, edit func(*Diff), flags ...string) (*Diff, error) {
	o := &Diff{Run: Run{Output: "text", Concurrency: 32, MaxTargets: 1, Timeout: 1, Report: Report{Color: "auto"}, Given: given(flags...)}}
	if edit != nil {
		edit(o)
	}
	o.cfg = testConfig(env)
	return o, o.validate(plan.ConfigFromBase)
}

// TestAGitLabParallelJobIsAShard: in a job with parallel: N, CI_NODE_INDEX of
// CI_NODE_TOTAL is the run's --shard unless --shard is given, and such a job may not
// publish; the branches are the merge request's, and the base its diff base.
func TestAGitLabParallelJobIsAShard(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GITLAB_CI": "true", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "base123"}
	o, err := gitlabRun(env, nil)
	if err != nil || o.shard != (plan.Shard{Index: 2, Count: 3}) {
		t.Errorf("parallel job: %+v %v", o.shard, err)
	}
	if got := strings.Join(o.branches(), ","); got != "main,feature" {
		t.Errorf("branches = %s", got)
	}
	if b := o.gitlabBase(o.Base); b != "base123" {
		t.Errorf("base = %q", b)
	}
	if o, err := gitlabRun(env, func(o *Diff) { o.Shard, o.Base = "1/1", "main" }, "shard", "base"); err != nil || o.shard.Sharded() || o.gitlabBase(o.Base) != "main" {
		t.Errorf("--shard and --base given: %+v %v", o.shard, err)
	}
	if _, err := gitlabRun(env, func(o *Diff) { o.GitLab.Note = true }, "gitlab-note"); err == nil || !strings.Contains(err.Error(), "--gitlab-note with --shard (or a GitLab parallel job)") {
		t.Errorf("a shard that publishes: %v", err)
	}
	delete(env, "GITLAB_CI")
	if o, err := gitlabRun(env, nil); err != nil || o.shard.Sharded() || o.branches() != nil {
		t.Errorf("outside GitLab CI: %+v %v %v", o.shard, o.branches(), err)
	}
}

// TestEverySiteSettingReachesPublish: each setting of a forge of publish.Kinds is in
// what publish is asked to do, with the forge's Kind; one forge at a time, whichever
// the other is.
func TestEverySiteSettingReachesPublish(t *testing.T) {
	t.Parallel()
	for _, k := range publish.Kinds {
		ci := forge.CI{Token: "tok", APIURL: "https://forge.example/api", Repository: "acme/gitops", PR: 7, HeadSHA: "abc", Author: "drift-bot"}
		s := Sites{}
		*s.Of(k.Flag) = Site{Comment: true, Status: false, Issue: true, CI: ci}
		var got publish.Options
		if err := s.apply(&got); err != nil {
			t.Fatal(err)
		}
		want := publish.Options{Kind: k, CI: ci, Comment: true, Check: false, Issue: true}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: options = %+v\nwant      %+v", k.Name, got, want)
		}
		for _, other := range []publish.Options{{Comment: true}, {Issue: true, Forge: publish.GitLab}, {Comment: true, Kind: k}} {
			if err := s.apply(&other); err == nil || !strings.Contains(err.Error(), "one forge a run") {
				t.Errorf("%s with %+v: %v", k.Name, other, err)
			}
		}
	}
}
