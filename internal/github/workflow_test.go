package github

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// workflow is the part of a GitHub Actions workflow the guard reads.
type workflow struct {
	On   any `yaml:"on"`
	Jobs map[string]struct {
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// triggers lists a workflow's events, whichever of the three forms `on` takes.
func (w workflow) triggers() []string {
	switch on := w.On.(type) {
	case string:
		return []string{on}
	case []any:
		var out []string
		for _, e := range on {
			out = append(out, e.(string))
		}
		return out
	case map[string]any:
		var out []string
		for e := range on {
			out = append(out, e)
		}
		return out
	}
	return nil
}

// allowedCommand is every command a privileged workflow may run: reading git
// objects and writing a kubeconfig. Nothing else, so nothing from the pull request
// (a script, a Makefile, a package manifest, a checkout) can be executed.
var allowedCommand = regexp.MustCompile(`^(git (fetch|cat-file|rev-parse)|mkdir|printf|chmod) `)

// TestPrivilegedWorkflowsNeverRunThePullRequest is the fork attack on the workflows
// users copy from us: a job that holds a write token (pull_request_target,
// workflow_run) must not check out the pull request, run a file from it, paste an
// event field into a script, or post what the fork's own run produced (an artifact).
// It reads the pull request as git objects and lets drift post its own report.
func TestPrivilegedWorkflowsNeverRunThePullRequest(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../docs/examples/*.yml")
	more, _ := filepath.Glob("../../.github/workflows/*.yml")
	privileged := map[string]bool{}
	for _, file := range append(files, more...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var w workflow
		if err := yaml.Unmarshal(data, &w); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, e := range w.triggers() {
			privileged[filepath.Base(file)] = privileged[filepath.Base(file)] || e == "pull_request_target" || e == "workflow_run"
		}
		if !privileged[filepath.Base(file)] {
			continue
		}
		for job, j := range w.Jobs {
			drift := false
			for i, s := range j.Steps {
				at := fmt.Sprintf("%s: job %s, step %d (%s)", file, job, i+1, strings.TrimSpace(s.Name+" "+s.Uses))
				uses, _, _ := strings.Cut(s.Uses, "@")
				switch uses {
				case "actions/checkout":
					if s.With["ref"] != "" || s.With["repository"] != "" {
						t.Errorf("%s checks out %q %q: only the base repository may be checked out", at, s.With["repository"], s.With["ref"])
					}
					if s.With["persist-credentials"] != "false" {
						t.Errorf("%s leaves the token in .git/config (persist-credentials: false)", at)
					}
				case "actions/download-artifact", "actions/github-script", "dawidd6/action-download-artifact":
					t.Errorf("%s uses %s: what a fork's run produced is never posted", at, uses)
				case "drift-gitops/drift":
					drift = true
					if s.With["ref"] != "${{ github.event.pull_request.head.sha }}" || s.With["base-ref"] != "${{ github.event.pull_request.base.sha }}" {
						t.Errorf("%s: drift must read the pull request's head commit against its base, got ref %q base %q", at, s.With["ref"], s.With["base-ref"])
					}
				case "":
				default:
					if !strings.HasPrefix(uses, "actions/") {
						t.Errorf("%s uses %s, which the guard does not know to be safe", at, uses)
					}
				}
				if strings.Contains(s.Run, "${{") {
					t.Errorf("%s pastes an expression into a script: pass it through env", at)
				}
				for _, line := range strings.Split(s.Run, "\n") {
					line = strings.TrimSpace(line)
					if line != "" && !strings.HasPrefix(line, "#") && !allowedCommand.MatchString(line+" ") {
						t.Errorf("%s runs %q: a privileged job only reads git objects", at, line)
					}
				}
			}
			if !drift {
				t.Errorf("%s: job %s does not run drift", file, job)
			}
		}
	}
	if !privileged["pull-request-fork.yml"] {
		t.Error("docs/examples/pull-request-fork.yml is missing or not a pull_request_target workflow")
	}
}
