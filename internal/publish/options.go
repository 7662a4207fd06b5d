package publish

import (
	"io"
	"net/http"

	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/github"
	"github.com/drift-gitops/drift/internal/gitlab"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/steplog"
)

// Options say what to publish; the zero value publishes nothing.
type Options struct {
	// JSONReport, when set, is a file to write the JSON report to (an artifact).
	JSONReport string
	// Outputs appends the step outputs (has-changes, counts, report-json, ...) to
	// $GITHUB_OUTPUT.
	Outputs bool
	// Comment posts the report as the pull request's drift comment, kept up to date.
	Comment bool
	// Check, with Comment, also reports a check run (or a commit status) on the head
	// commit.
	Check bool
	// MarkdownTemplate is a user's markdown template file (--markdown-template).
	MarkdownTemplate string
	// Annotate writes a workflow command per error object, which GitHub shows on the
	// manifest's file and line (in an Actions step).
	Annotate bool
	// CheckName names the check run: "drift", or for a part of the targets (a matrix
	// job's --target) "drift (shop-prod, web)", so that jobs do not overwrite each other.
	CheckName string
	// HTMLReport is the HTML report's file (--html), for the step outputs;
	// HTMLArtifact the artifact it is uploaded as, which the comment links to.
	HTMLReport, HTMLArtifact string
	// Issue keeps the target set's drift issue up to date instead of commenting.
	Issue bool
	// CommentFile, when set, is a file to write the comment to, with its marker.
	CommentFile string
	// GitHub overrides the Actions environment (GITHUB_TOKEN, GITHUB_REPOSITORY, the
	// event's pull request, GITHUB_STEP_SUMMARY, ...) field by field: a zero field
	// keeps what the environment says. These are the --github-* and --step-summary
	// flags.
	GitHub github.Context
	// Forge is where Comment, Check and Issue go: GitHub (the zero value) or GitLab.
	Forge Forge
	// GitLab overrides the GitLab CI environment (CI_PROJECT_ID, CI_MERGE_REQUEST_IID,
	// the token, ...) field by field, as GitHub does the Actions environment: the
	// --gitlab-* flags.
	GitLab gitlab.Context
	// Kind, when set, is the forge of Kinds that Comment, Check and Issue go to
	// instead (Forge is then GitHub, the zero value), and CI overrides what its
	// pipeline's variables say, field by field: the --<forge>-* flags.
	Kind *forge.Kind
	CI   forge.CI
	// Dotenv, when set, is a file the outputs are appended to as DRIFT_*=value lines,
	// a GitLab CI dotenv report (artifacts:reports:dotenv) later jobs read.
	Dotenv string
}

// Forge names a forge.
type Forge string

// The forges drift publishes to.
const (
	GitHub Forge = ""
	GitLab Forge = "gitlab"
)

// Deps are what publishing reaches outside itself.
type Deps struct {
	// Getenv reads the Actions environment (GITHUB_*); required.
	Getenv func(string) string
	// Transport carries the requests to GitHub; nil is http.DefaultTransport.
	Transport http.RoundTripper
	// Stderr hears what was published ("drift: updated the pull request comment").
	Stderr io.Writer
	// Commands is where the annotations (workflow commands) go: in an Actions step,
	// the step log's own path for drift's commands (steplog.Writer.WriteCommand), which
	// the neutralising of Stderr does not touch; nil is steplog.CommandsTo(Stderr).
	Commands steplog.Commands
	// Warn, when set, hears what the user should know but need not fail on (marked
	// comments drift left alone).
	Warn func(msg string)
	// DocumentLine, when set, is the line a file's doc-th YAML document starts on, for
	// annotations (0: unknown).
	DocumentLine func(source string, doc int) int
	// Files is where the JSON copy, the step outputs, the dotenv report, the job
	// summary and the comment file are written; nil is the process's file system.
	Files files.FS
}

// wantsGitHub says whether anything reads the Actions environment: the comment, the
// issue, the job summary or the comment file.
func (o Options) wantsGitHub() bool {
	if o.Forge == GitLab || o.Kind != nil {
		return o.GitHub.StepSummary != ""
	}
	return o.Comment || o.Issue || o.GitHub.StepSummary != "" || o.CommentFile != ""
}

// Context merges the overrides over the Actions environment.
func (o Options) Context(getenv func(string) string) (github.Context, error) {
	c, err := github.FromEnv(getenv)
	if err != nil {
		return c, err
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	g := o.GitHub
	set(&c.Token, g.Token)
	set(&c.Repository, g.Repository)
	set(&c.APIURL, g.APIURL)
	set(&c.HeadSHA, g.HeadSHA)
	set(&c.Author, g.Author)
	set(&c.StepSummary, g.StepSummary)
	if g.PR > 0 {
		c.PR = g.PR
	}
	return c, nil
}

// Preflight fails, before any work, when the comment or the issue is asked for but
// GitHub cannot be reached for lack of a token, a repository or a pull request.
func (o Options) Preflight(getenv func(string) string) error {
	if !o.Comment && !o.Issue {
		return nil
	}
	if o.Kind != nil {
		c, err := o.SiteContext(getenv)
		if err != nil {
			return err
		}
		return o.Kind.Check(c, !o.Issue)
	}
	if o.Forge == GitLab {
		c, err := o.GitLabContext(getenv)
		if err != nil {
			return err
		}
		return c.Check(!o.Issue)
	}
	c, err := o.Context(getenv)
	if err != nil {
		return err
	}
	if o.Issue {
		c.PR = 1 // an issue needs no pull request
	}
	return c.Check()
}

// GitLabContext merges the --gitlab-* overrides over the GitLab CI environment.
func (o Options) GitLabContext(getenv func(string) string) (gitlab.Context, error) {
	c, err := gitlab.FromEnv(getenv)
	if err != nil {
		return c, err
	}
	g := o.GitLab
	if g.HeadSHA != "" && g.HeadSHA != c.HeadSHA {
		// The running pipeline runs CI_COMMIT_SHA; GitLab refuses its ID with another
		// commit (404), so that commit's status goes into a pipeline GitLab picks.
		c.PipelineID = 0
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&c.Token, g.Token}, {&c.Project, g.Project}, {&c.APIURL, g.APIURL}, {&c.HeadSHA, g.HeadSHA},
		{&c.PipelineURL, g.PipelineURL}, {&c.JobURL, g.JobURL},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if g.Token != "" {
		c.JobTokenOnly = false
	}
	if g.MR > 0 {
		c.MR = g.MR
	}
	return c, nil
}
