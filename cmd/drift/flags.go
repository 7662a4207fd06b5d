package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/discover"
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
)

// bindRun registers the flags every run takes (diff, detect, report merge) onto o,
// kubectl's connection flags onto cfg's, and o.Given onto the command's flags.
func bindRun(cmd *cobra.Command, cfg *app.Config, o *app.Run) {
	f := cmd.Flags()
	bindSource(f, o)
	f.StringVarP(&o.Output, "output", "o", "text", "report format: text, markdown, json or changes (field by field)")
	f.StringVar(&o.OutFile, "out", "", "write the report to this file instead of stdout")
	f.IntVar(&o.Concurrency, "concurrency", 32, "objects previewed at once")
	f.StringVar(&o.FieldManager, "field-manager", "", "field manager the real pipeline applies with, where the applier lets you choose it (default: the applier's own, kubectl for kubectl-server-side)")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "preview a forced apply, taking fields over from other managers")
	f.BoolVar(&o.ShowUnchanged, "show-unchanged", false, "list unchanged objects by name (they are always counted)")
	f.BoolVar(&o.ShowSecrets, "show-secrets", false, "show Secret values instead of *** (local use only; never in CI; the dry-run cache is not used)")
	f.StringVar(&o.Dump, "dump", "", "also write the normalized objects into DIR/live and DIR/merged (DIR/base and DIR/head for a split change), named as kubectl diff names them")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "deadline for the whole run: past it, what is not finished is reported not-checked")
	f.BoolVar(&o.Prune, "prune", true, "report what applying would delete: objects an inventory in the cluster owns that the change no longer renders (--prune=false skips it)")
	f.StringVar(&o.Applier, "applier", "", "what applies the targets for real, so drift predicts what it does: "+applier.NameList()+" (default "+string(applier.Default)+"); overrides drift.yaml")
	f.StringVar(&o.ApplyMode, "apply-mode", "", "old name of --applier: server is kubectl-server-side, client is kubectl")
	f.BoolVar(&o.NoCache, "no-cache", false, "send every dry run: neither answer from drift's dry-run cache nor keep answers in it (the cache is keyed by everything that decides an answer; docs/performance.md#the-dry-run-cache)")
	f.StringVar(&o.Shard, "shard", "", "preview only share I of N of the run (such as 2/4), for a matrix of runners; write each share with -o json and combine them with drift report merge")
	f.StringVar(&o.ShardBy, "shard-by", "object", "how --shard splits the run: object (every target's objects, spread over the shards) or cluster (each cluster's targets whole, one shard connecting to each cluster: for a fleet)")
	bindGitHub(f, &o.GitHub)
	bindGitLab(f, &o.GitLab)
	bindSites(f, o)
	bindReport(f, &o.Report)
	cfg.Kube.AddFlags(f)
	o.Given = func(name string) bool { fl := f.Lookup(name); return fl != nil && fl.Changed }
}

// bindSource registers what to read and render: the repository, the ref, the paths,
// drift.yaml, the targets, the branches, the render limits and the charts.
func bindSource(f *pflag.FlagSet, o *app.Run) {
	f.StringVar(&o.Repo, "repo", ".", "directory inside the git repository to read")
	f.StringVar(&o.Ref, "ref", "", "git ref to render (branch, origin/main, tag, SHA, HEAD~2, refs/pull/N/merge); default: the work tree as it is on disk")
	f.StringArrayVar(&o.Paths, "path", nil, "directory or file to render, or to discover Argo CD and Flux objects in, relative to --repo (repeatable; default: --repo itself)")
	f.StringVar(&o.Config, "config", "", "drift.yaml to use instead of the one at the root of the rendered ref (a path inside the repository is read from the refs, like drift.yaml)")
	f.StringArrayVar(&o.Targets, "target", nil, "only the targets with this name (repeatable; globs like 'web-*' allowed)")
	f.StringArrayVar(&o.Branches, "branch", nil, "a branch the previewed ref stands for (repeatable): Argo CD and Flux sources that follow it render from the ref (default: in GitHub Actions the pull request's base and head branches, else GITHUB_REF_NAME; in GitLab CI the merge request's target and source branches, else CI_COMMIT_BRANCH; and always the branches whose tip the ref is, and the default branch)")
	f.IntVar(&o.MaxTargets, "max-targets", discover.DefaultMaxTargets, "most targets discovery makes from the repository's Argo CD and Flux objects (what would make more is an error naming it; the rest is reported)")
	f.DurationVar(&o.RenderLimits.Timeout, "render-timeout", render.DefaultTimeout, "longest time rendering one target may take")
	f.StringVar(&o.RenderLimits.Memory, "render-memory", "1Gi", "most memory rendering one target may use (its own process)")
	f.StringVar(&o.RenderLimits.Output, "render-max-output", "64Mi", "largest output one target may render (Helm's template output, the rendered objects)")
	f.IntVar(&o.RenderLimits.Objects, "render-max-objects", render.DefaultObjects, "most objects one target may render")
	c := &o.Charts
	f.BoolVar(&c.Offline, "offline", false, "render charts of chart repositories and registries from drift's chart cache alone, without reaching them")
	f.BoolVar(&c.ResolveRanges, "resolve-ranges", false, "let a chart version range resolve to the highest version it allows (the report says which); without it only exact versions are fetched")
	f.StringVar(&c.RepositoryConfig, "repository-config", "", "Helm repositories.yaml with the runner's credentials for private chart repositories (default $HELM_REPOSITORY_CONFIG)")
	f.StringVar(&c.RegistryConfig, "registry-config", "", "Helm registry config.json with the runner's credentials for OCI registries (default $HELM_REGISTRY_CONFIG)")
}

// bindGitHub registers the GitHub side's flags but --github-issue (detect's and merge's).
func bindGitHub(f *pflag.FlagSet, g *app.GitHub) {
	f.BoolVar(&g.Comment, "github-comment", false, "post the report to the pull request as one comment, updated on every run, and report a check run (context from GITHUB_* variables)")
	f.BoolVar(&g.Check, "github-check", true, "with --github-comment: also report a check run named drift (or a commit status) on the head commit")
	f.BoolVar(&g.FailOnDeletes, "fail-on-deletes", false, "fail when the change deletes objects: the same as --fail-on delete")
	f.StringVar(&g.Token, "github-token", "", "GitHub token (default $GITHUB_TOKEN)")
	f.StringVar(&g.Repository, "github-repository", "", "owner/name (default $GITHUB_REPOSITORY)")
	f.IntVar(&g.PR, "github-pr", 0, "pull request number (default: from the event at $GITHUB_EVENT_PATH)")
	f.StringVar(&g.APIURL, "github-api-url", "", "GitHub API URL, for GitHub Enterprise Server (default $GITHUB_API_URL, else https://api.github.com)")
	f.StringVar(&g.Author, "github-author", "", "login drift's comment and drift issue are written by; marked comments and issues of anyone else are left alone (default: the token's user, or github-actions[bot] for an installation token; name a GitHub App's bot, such as my-app[bot], when using its token)")
	f.StringVar(&g.HeadSHA, "github-sha", "", "head commit for the check (default: the pull request's head, else $GITHUB_SHA)")
	f.StringVar(&g.StepSummary, "step-summary", "", "append the full markdown report to this file (default with --github-comment or --github-issue: $GITHUB_STEP_SUMMARY)")
	f.StringVar(&g.JSONReport, "json-report", "", "also write the JSON report to this file (for an artifact)")
	f.StringVar(&g.CommentFile, "comment-file", "", "write the pull request comment (size-limited markdown, with its marker) to this file instead of, or besides, posting it")
	f.BoolVar(&g.Outputs, "github-output", false, "write the step outputs has-changes, counts and report-json to $GITHUB_OUTPUT (the Action uses it)")
}

// bindGitLab registers the GitLab side's flags but --gitlab-issue (detect's and merge's).
func bindGitLab(f *pflag.FlagSet, g *app.GitLab) {
	f.BoolVar(&g.Note, "gitlab-note", false, "post the report to the merge request as one note, updated on every run, and set a commit status (context from GitLab CI's CI_* variables; the token from DRIFT_GITLAB_TOKEN or GITLAB_TOKEN)")
	f.BoolVar(&g.Status, "gitlab-status", true, "with --gitlab-note: also set a commit status named drift on the merge request's head commit")
	f.StringVar(&g.Token, "gitlab-token", "", "GitLab project access token with the api scope (default $DRIFT_GITLAB_TOKEN, else $GITLAB_TOKEN; CI_JOB_TOKEN cannot write notes)")
	f.StringVar(&g.Project, "gitlab-project", "", "project ID or path (default $CI_PROJECT_ID)")
	f.Int64Var(&g.MR, "gitlab-mr", 0, "merge request IID (default $CI_MERGE_REQUEST_IID)")
	f.StringVar(&g.APIURL, "gitlab-api-url", "", "GitLab API URL (default $CI_API_V4_URL, else https://gitlab.com/api/v4); the token is sent to its scheme, host and port only")
	f.StringVar(&g.HeadSHA, "gitlab-sha", "", "commit the status is set on (default $CI_COMMIT_SHA, the commit the pipeline runs, in pipeline $CI_PIPELINE_ID; another commit's status is not added to that pipeline)")
	f.StringVar(&g.Dotenv, "gitlab-dotenv", "", "append the outputs (DRIFT_HAS_CHANGES, DRIFT_COUNTS, DRIFT_REPORT_JSON, ...) to this file, a dotenv report for later jobs")
	f.StringVar(&g.Dotenv, "dotenv", "", "append the outputs (DRIFT_HAS_CHANGES, DRIFT_COUNTS, DRIFT_REPORT_JSON, ...) to this file as KEY=value lines, for later steps (the same as --gitlab-dotenv)")
}

// bindSites registers the flags of each forge of publish.Kinds but its --X-issue
// (detect's and merge's): --gitea-comment, --bitbucket-token, --azure-pr, ...
func bindSites(f *pflag.FlagSet, o *app.Run) {
	for _, k := range publish.Kinds {
		s := o.Sites.Of(k.Flag)
		p := k.Flag + "-"
		f.BoolVar(&s.Comment, p+"comment", false, fmt.Sprintf("post the report to the %s as one %s, updated on every run, and set a status (context from the pipeline's variables; %s)", k.Review, k.Note, k.Docs))
		f.BoolVar(&s.Status, p+"status", true, fmt.Sprintf("with --%scomment: also set a status named drift on the commit the pipeline runs", p))
		f.StringVar(&s.CI.Token, p+"token", "", fmt.Sprintf("%s token (default $%s)", k.Name, strings.Join(k.TokenVariables, ", else $")))
		f.StringVar(&s.CI.APIURL, p+"api-url", "", fmt.Sprintf("%s API URL (default: from the pipeline's variables); the token is sent to its scheme, host and port only", k.Name))
		f.StringVar(&s.CI.Repository, p+"repository", "", fmt.Sprintf("%s repository (default: from the pipeline's variables; %s)", k.Name, k.Docs))
		f.Int64Var(&s.CI.PR, p+"pr", 0, fmt.Sprintf("%s number (default: from the pipeline's variables)", k.Review))
		f.StringVar(&s.CI.HeadSHA, p+"sha", "", "commit the status is set on (default: the commit the pipeline runs)")
		f.StringVar(&s.CI.RunURL, p+"run-url", "", "the CI run's page, which the comment and the status link for its artifacts (default: from the pipeline's variables; Jenkins: $BUILD_URL)")
		f.StringVar(&s.CI.Author, p+"author", "", fmt.Sprintf("the %s user drift writes as, where the token cannot say whom it belongs to; marked %ss and %ss of anyone else are left alone (%s)", k.Name, k.Note, k.Tracked, k.Docs))
	}
}

// bindIssues registers --github-issue and --gitlab-issue: one issue a target set, kept.
func bindIssues(f *pflag.FlagSet, o *app.Run) {
	f.BoolVar(&o.GitHub.Issue, "github-issue", false, "keep one GitHub issue (label drift) for this target set: opened when drift appears, updated when it changes, closed when it is gone")
	f.BoolVar(&o.GitLab.Issue, "gitlab-issue", false, "keep one GitLab issue (label drift) for this target set: opened when drift appears, updated when it changes, closed when it is gone")
	for _, k := range publish.Kinds {
		s := o.Sites.Of(k.Flag)
		f.BoolVar(&s.Issue, k.Flag+"-issue", false, fmt.Sprintf("keep one %s %s (labelled drift) for this target set: opened when drift appears, updated when it changes, closed when it is gone (%s)", k.Name, k.Tracked, k.Docs))
	}
}

// bindReport registers how the report is judged and shown.
func bindReport(f *pflag.FlagSet, r *app.Report) {
	f.StringSliceVar(&r.FailOn, "fail-on", nil, "policy: exit 3 and fail the check when the report has any of "+strings.Join(config.FailOnValues, ", ")+" (comma-separated; adds to drift.yaml's failOn)")
	f.StringVar(&r.Color, "color", "auto", "colour the text report: auto (a terminal, unless NO_COLOR is set or FORCE_COLOR asks for it), always or never")
	f.StringVar(&r.MarkdownTemplate, "markdown-template", "", "lay the markdown report and the pull request comment out with this Go text/template file, over the built-in one (docs/report.md#templates)")
	f.StringVar(&r.HTML, "html", "", "also write the report as one self-contained HTML page to this file")
	f.StringVar(&r.HTMLArtifact, "html-artifact", "", "with --html and --github-comment: the name of the workflow artifact the page is uploaded as, which the comment points to (the Action sets it)")
	f.IntVarP(&r.Unified, "unified", "U", report.DefaultContext, "lines of context in each diff")
}
