package publish

import (
	"os"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/policy"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report/write"
)

// TestOutputsAreAppendedInTheActionsFormat: the step outputs the Action declares, one
// name=value a line, appended after what earlier steps wrote.
func TestOutputsAreAppendedInTheActionsFormat(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	out := h.path("output")
	if err := os.WriteFile(out, []byte("earlier=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["GITHUB_OUTPUT"] = out
	jsonReport := h.path("report.json")
	rep := preview(t, added("a", nil), modified("b", map[string]string{"v": "1"}, map[string]string{"v": "2"}), deleted("c"), failed("d", "denied"))
	if err := policy.Apply(rep, []string{"delete"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.publish(t, rep, Options{Outputs: true, JSONReport: jsonReport, HTMLReport: "report.html"}); err != nil {
		t.Fatal(err)
	}
	want := "earlier=1\nhas-changes=true\ncounts=1 to add, 1 to modify, 1 to delete, 0 unchanged, 1 error\nadd=1\nmodify=1\ndelete=1\nunchanged=0\nerrors=1\ncomplete=false\nrisky=0\npolicy-failed=true\nreport-json=" + jsonReport + "\nreport-html=report.html\n"
	if got := read(t, out); got != want {
		t.Errorf("outputs:\n%s\nwant:\n%s", got, want)
	}

	delete(h.env, "GITHUB_OUTPUT")
	if _, err := h.publish(t, rep, Options{Outputs: true}); err == nil || !strings.Contains(err.Error(), "GITHUB_OUTPUT is not set") {
		t.Errorf("without GITHUB_OUTPUT: %v", err)
	}
}

// TestTheCommentFileIsTheCommentWithItsMarker: the file holds what the comment would
// be, marker first, written without asking GitHub (nor needing a token).
func TestTheCommentFileIsTheCommentWithItsMarker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	delete(h.env, "GITHUB_TOKEN")
	rep := build(t, reportInput("web", "api"))
	file := h.path("out/comment.md")
	if _, err := h.publish(t, rep, Options{CommentFile: file}); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	if err := write.Markdown(&md, rep, commentBody); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, file), forge.Marker([]string{"api", "web"})+"\n"+md.String(); got != want {
		t.Errorf("comment file:\n%s\nwant:\n%s", got, want)
	}
	if len(h.srv.Requests) != 0 {
		t.Errorf("GitHub was asked: %v", h.srv.Requests)
	}
}

// TestTheEnvironmentIsReadOnlyForTheGitHubSide: the JSON copy alone reads nothing,
// the outputs read GITHUB_OUTPUT alone; a broken event file (an Actions environment
// drift was not asked to use) then fails nothing.
func TestTheEnvironmentIsReadOnlyForTheGitHubSide(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	h.env["GITHUB_EVENT_PATH"] = h.path("missing-event.json")
	h.env["GITHUB_OUTPUT"] = h.path("output")
	var read []string
	deps := h.deps()
	deps.Getenv = func(k string) string { read = append(read, k); return h.env[k] }
	rep := preview(t, added("a", nil))
	if err := Run(t.Context(), rep, Options{JSONReport: h.path("r.json")}, deps); err != nil || len(read) != 0 {
		t.Fatalf("JSON copy: %v, read %v", err, read)
	}
	if err := Run(t.Context(), rep, Options{Outputs: true}, deps); err != nil || strings.Join(read, ",") != "GITHUB_OUTPUT" {
		t.Fatalf("outputs: %v, read %v", err, read)
	}
	if err := Run(t.Context(), rep, Options{Comment: true}, deps); err == nil || !strings.Contains(err.Error(), "failed to read the GitHub event") {
		t.Errorf("the comment did not read the event: %v", err)
	}
}

// TestOverridesWinOverTheEnvironment: every --github-* flag replaces its GITHUB_*
// variable; an unset one keeps it.
func TestOverridesWinOverTheEnvironment(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 12)
	o := Options{GitHub: github.Context{Repository: "other/repo", PR: 99, HeadSHA: "fff", Author: "deploy-app[bot]", StepSummary: "/tmp/s.md"}}
	c, err := o.Context(h.getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := github.Context{Token: token, Repository: "other/repo", APIURL: h.srv.URL, PR: 99, HeadSHA: "fff", Author: "deploy-app[bot]", StepSummary: "/tmp/s.md"}
	if c != want {
		t.Errorf("context = %+v\nwant      %+v", c, want)
	}
	if c, _ := (Options{}).Context(h.getenv); c.PR != 12 || c.HeadSHA != headSHA || c.Repository != "acme/gitops" {
		t.Errorf("without overrides: %+v", c)
	}
}

// TestPreflightSaysWhatIsMissing: before any work, the comment needs a token, a
// repository and a pull request, the issue no pull request; nothing asked needs
// nothing.
func TestPreflightSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	cases := []struct {
		name string
		opts Options
		want string // "" for no error
	}{
		{"nothing asked", Options{JSONReport: "r.json", CommentFile: "c.md"}, ""},
		{"comment", Options{Comment: true}, "cannot post to GitHub: missing a token (GITHUB_TOKEN or --github-token), the repository as owner/name (GITHUB_REPOSITORY or --github-repository), the pull request number (a pull_request event in GITHUB_EVENT_PATH, or --github-pr)"},
		{"comment, flags given", Options{Comment: true, GitHub: github.Context{Token: "t", Repository: "a/b", PR: 1}}, ""},
		{"issue", Options{Issue: true, GitHub: github.Context{Token: "t"}}, "cannot post to GitHub: missing the repository as owner/name (GITHUB_REPOSITORY or --github-repository)"},
		{"issue, flags given", Options{Issue: true, GitHub: github.Context{Token: "t", Repository: "a/b"}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := c.opts.Preflight(none)
			if (c.want == "") != (err == nil) || (err != nil && err.Error() != c.want) {
				t.Errorf("Preflight = %v, want %q", err, c.want)
			}
		})
	}
}
