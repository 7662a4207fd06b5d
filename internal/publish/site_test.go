package publish

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/azure/azuretest"
	"github.com/drift-gitops/drift/internal/bitbucket/bitbuckettest"
	"github.com/drift-gitops/drift/internal/gitea/giteatest"
	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write/trusttest"
)

// siteHarness is one forge of Kinds, its stand-in, and a pipeline's variables.
type siteHarness struct {
	kind *forge.Kind
	env  map[string]string
	// note is pull request 7's drift note, item the tracked item's body and
	// status the statuses' descriptions, as the stand-in holds them.
	note   func() string
	item   func() string
	status func() []string
	// tooLong makes the stand-in refuse a note over 30,000 characters, as the forge
	// refuses one over its limit (nil when the limit cannot be lowered).
	tooLong func()
	stderr  bytes.Buffer
}

// The run the harnesses' pipelines describe, and the token each forge takes.
const (
	siteSHA   = "0123456789abcdef0123456789abcdef01234567"
	siteToken = "site-token-value"
)

// newSiteHarnesses starts each forge's stand-in; review says whether the pipeline
// runs for pull request 7.
func newSiteHarnesses(t *testing.T, review bool) []*siteHarness {
	t.Helper()
	gt := giteatest.New(siteToken)
	t.Cleanup(gt.Close)
	gt.AddCommit(siteSHA)
	pr := gt.AddPullRequest(giteatest.Someone, "the change")
	event := filepath.Join(t.TempDir(), "event.json")
	data, _ := json.Marshal(map[string]any{"number": pr, "pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": siteSHA}}})
	if err := os.WriteFile(event, data, 0o600); err != nil {
		t.Fatal(err)
	}
	gitea := &siteHarness{kind: KindOf("gitea"), env: map[string]string{"GITEA_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/gitops",
		"GITHUB_SERVER_URL": "https://gitea.example/", "GITHUB_API_URL": gt.URL + "/api/v1", "GITHUB_SHA": siteSHA, "GITHUB_RUN_NUMBER": "5", "GITEA_TOKEN": siteToken},
		note: func() string {
			if c := gt.Comments(pr); len(c) == 1 {
				return c[0].Body
			}
			return ""
		},
		item: func() string {
			for _, is := range gt.Issues {
				if is.PullRequest == nil {
					return is.Body
				}
			}
			return ""
		},
		status: func() []string {
			var out []string
			for _, s := range gt.Statuses {
				out = append(out, s.Description)
			}
			return out
		},
		tooLong: func() { gt.MaxBody = 30000 },
	}
	if review {
		gitea.env["GITHUB_EVENT_PATH"] = event
	}

	bb := bitbuckettest.New(bitbuckettest.Cloud, siteToken)
	t.Cleanup(bb.Close)
	bitbucket := &siteHarness{kind: KindOf("bitbucket"), env: map[string]string{"CI": "true", "BITBUCKET_BUILD_NUMBER": "12",
		"BITBUCKET_PIPELINE_UUID": "{0b7e0c6e}", "BITBUCKET_WORKSPACE": "acme", "BITBUCKET_REPO_SLUG": "gitops", "BITBUCKET_REPO_FULL_NAME": "acme/gitops",
		"BITBUCKET_COMMIT": siteSHA, "DRIFT_BITBUCKET_TOKEN": siteToken, "DRIFT_BITBUCKET_AUTHOR": bitbuckettest.RepositoryBot.UUID},
		note: func() string {
			if c := bb.Comments(); len(c) == 1 {
				return c[0].Text
			}
			return ""
		},
		item: func() string {
			for _, is := range bb.Issues {
				return is.Content
			}
			return ""
		},
		status: func() []string {
			var out []string
			for _, s := range bb.Statuses[siteSHA] {
				d, _ := s["description"].(string)
				out = append(out, d)
			}
			return out
		},
		// Bitbucket's budget (MaxNoteBytes) is below 30,000 characters: lower.
		tooLong: func() { bb.MaxComment = 20000 },
	}
	if review {
		bitbucket.env["BITBUCKET_PR_ID"] = "7"
	}

	az := azuretest.New(siteToken)
	t.Cleanup(az.Close)
	azure := &siteHarness{kind: KindOf("azure"), env: map[string]string{"TF_BUILD": "True", "SYSTEM_COLLECTIONURI": az.APIURL(),
		"SYSTEM_TEAMPROJECT": "shop", "BUILD_REPOSITORY_NAME": "gitops", "BUILD_REPOSITORY_PROVIDER": "TfsGit", "BUILD_SOURCEVERSION": siteSHA,
		"BUILD_BUILDID": "12", "SYSTEM_ACCESSTOKEN": siteToken},
		note: func() string {
			if th := az.Threads(7); len(th) == 1 {
				return th[0].Comments[0].Content
			}
			return ""
		},
		item: func() string {
			for _, wi := range az.WorkItems {
				d, _ := wi.Fields["System.Description"].(string)
				return d
			}
			return ""
		},
		status: func() []string {
			var out []string
			for _, s := range az.Statuses {
				d, _ := s["description"].(string)
				out = append(out, d)
			}
			return out
		},
	}
	if review {
		azure.env["SYSTEM_PULLREQUEST_PULLREQUESTID"] = "7"
	}
	// The API URL for Bitbucket is a stand-in's, given as --bitbucket-api-url is.
	for _, h := range []*siteHarness{gitea, bitbucket, azure} {
		if h.kind == nil {
			t.Fatal("a forge is missing from Kinds")
		}
	}
	bitbucket.env["test:api-url"] = bb.APIURL()
	azure.env["test:run"] = az.APIURL() + "shop/_build/results?buildId=12"
	return []*siteHarness{gitea, bitbucket, azure}
}

func (h *siteHarness) publish(t *testing.T, rep *report.Report, opts Options) error {
	t.Helper()
	h.stderr.Reset()
	opts.Kind = h.kind
	opts.CI.APIURL = h.env["test:api-url"]
	return Run(t.Context(), rep, opts, Deps{Getenv: func(k string) string { return h.env[k] }, Stderr: &h.stderr})
}

// TestTrustEveryBodyPublishedToTheOtherForgesHoldsNoInjection publishes the hostile
// report to each forge of Kinds, as the pull request's comment with its status, as
// the summary alone a refusal for size falls back to, and as the tracked drift item,
// and renders each body with cmark-gfm (CommonMark with GitHub's extensions, which
// Gitea's goldmark, Bitbucket's and Azure DevOps' renderers follow closely, and which
// renders HTML the others sanitize or drop): none holds an image, a link but drift's
// own, a heading or a </details> drift did not write, or a hostile string, mention,
// issue reference or URL outside <code> and <pre>; the status, plain text, holds no
// hostile string and no token is in any of it.
func TestTrustEveryBodyPublishedToTheOtherForgesHoldsNoInjection(t *testing.T) {
	t.Parallel()
	bin := trusttest.GFM(t)
	rep := hostileAndLarge()
	bodies, plain := map[string]string{}, map[string]string{}
	azureRun := ""
	for _, h := range newSiteHarnesses(t, true) {
		azureRun = max(azureRun, h.env["test:run"])
		if err := h.publish(t, rep, Options{Comment: true, Check: true, HTMLReport: "drift/report.html"}); err != nil {
			t.Fatalf("%s: %v", h.kind.Name, err)
		}
		bodies[h.kind.Name+" comment"] = h.note()
		if st := h.status(); len(st) == 1 {
			plain[h.kind.Name+" status"] = st[0]
		} else {
			t.Errorf("%s: statuses %q", h.kind.Name, st)
		}
	}
	for _, h := range newSiteHarnesses(t, true) {
		if h.tooLong == nil {
			continue
		}
		h.tooLong()
		if err := h.publish(t, rep, Options{Comment: true}); err != nil {
			t.Fatalf("%s, too long: %v", h.kind.Name, err)
		}
		if bodies[h.kind.Name+" comment, too long"] = h.note(); !strings.Contains(h.note(), "The diffs are in") {
			t.Errorf("%s: the comment refused for its size was not followed by the summary alone:\n%.500s", h.kind.Name, h.note())
		}
	}
	for _, h := range newSiteHarnesses(t, false) {
		if err := h.publish(t, rep, Options{Issue: true}); err != nil {
			t.Fatalf("%s, issue: %v", h.kind.Name, err)
		}
		bodies[h.kind.Name+" "+h.kind.Tracked] = h.item()
	}
	page := trusttest.Page{MaxH4: trusttest.Diffed(rep), Links: []string{
		"https://gitea.example/acme/gitops/actions/runs/5",
		"https://bitbucket.org/acme/gitops/pipelines/results/12",
		azureRun,
	}}
	for name, md := range bodies {
		if !strings.Contains(md, trusttest.Mark) {
			t.Errorf("%s: missing or shows no hostile string:\n%.300s", name, md)
			continue
		}
		if strings.Contains(md, siteToken) {
			t.Errorf("%s holds the token", name)
		}
		rendered := trusttest.Render(t, bin, md)
		before := t.Failed()
		trusttest.Check(t, name, rendered, page)
		if !before && t.Failed() {
			t.Logf("%s markdown:\n%s\nrendered:\n%s", name, md, rendered)
		}
	}
	if len(bodies) != 3*3-1 {
		t.Errorf("%d bodies, want 8", len(bodies))
	}
	for name, s := range plain {
		if s == "" || strings.Contains(s, trusttest.Mark) {
			t.Errorf("%s: %q is empty or holds a hostile string", name, s)
		}
	}
}
