package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/azure/azuretest"
	"github.com/drift-gitops/drift/internal/bitbucket/bitbuckettest"
	"github.com/drift-gitops/drift/internal/gitea/giteatest"
)

// The commit a forge's pipeline runs, on which its status is set.
const forgeSHA = "abcdef0123456789abcdef0123456789abcdef01"

// forgeNote is a pull request note as a forge's stand-in holds it.
type forgeNote struct{ id, author, body string }

// forgeItem is a tracked item (an issue, a work item) as a stand-in holds it.
type forgeItem struct {
	open bool
	body string
}

// forgeUnderTest is one forge of publish.Kinds, its stand-in and a pipeline of it.
type forgeUnderTest struct {
	// name names the case; flag is the forge's flag prefix.
	name, flag string
	token      string
	// env is what the forge's pipeline gives a pull request's job (review) or a
	// scheduled job's; args are the flags the job gives besides.
	env  func(review bool) map[string]string
	args func(review bool) []string
	// noTracker, when set, is what drift says the forge cannot keep a tracked item.
	noTracker string
	// run is the run's page, which the status links.
	run string
	// notes are pull request 7's notes; addNote writes one as another user.
	notes   func() []forgeNote
	addNote func(body string)
	// statuses are the statuses set on forgeSHA (or on the pull request), as
	// "state description link".
	statuses func() []string
	items    func() []forgeItem
	// bodies are the bodies of every request received; fault answers requests
	// instead of the stand-in.
	bodies func() []string
	fault  func(func(w http.ResponseWriter, r *http.Request, n int) bool)
	writes func() int
	close  func()
}

// forgesUnderTest starts the stand-in of each forge drift publishes to beside GitHub
// and GitLab.
func forgesUnderTest(t *testing.T) []forgeUnderTest {
	t.Helper()
	dir := t.TempDir()

	gt := giteatest.New("gitea-token-value")
	gt.AddCommit(forgeSHA)
	pr := gt.AddPullRequest(giteatest.Someone, "the change")
	event := filepath.Join(dir, "event.json")
	data, _ := json.Marshal(map[string]any{"number": pr, "pull_request": map[string]any{"number": pr, "head": map[string]any{"sha": forgeSHA}}})
	if err := os.WriteFile(event, data, 0o600); err != nil {
		t.Fatal(err)
	}
	gitea := forgeUnderTest{name: "gitea", flag: "gitea", token: gt.Token, args: func(bool) []string { return nil }, run: gt.URL + "/acme/gitops/actions/runs/5",
		env: func(review bool) map[string]string {
			e := map[string]string{"GITEA_ACTIONS": "true", "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/gitops", "GITHUB_SERVER_URL": gt.URL + "/",
				"GITHUB_API_URL": gt.URL + "/api/v1", "GITHUB_SHA": forgeSHA, "GITHUB_RUN_NUMBER": "5", "GITEA_TOKEN": gt.Token, "GITHUB_EVENT_PATH": ""}
			if review {
				e["GITHUB_EVENT_PATH"] = event
			}
			return e
		},
		notes: func() []forgeNote {
			var out []forgeNote
			for _, c := range gt.Comments(pr) {
				out = append(out, forgeNote{fmt.Sprint(c.ID), c.User.Login, c.Body})
			}
			return out
		},
		addNote: func(body string) { gt.AddComment(pr, giteatest.Someone, body) },
		statuses: func() []string {
			var out []string
			for _, s := range gt.Statuses {
				if s.SHA == forgeSHA {
					out = append(out, s.State+" "+s.Description+" "+s.TargetURL)
				}
			}
			return out
		},
		items: func() []forgeItem {
			var out []forgeItem
			for _, is := range gt.Issues {
				if is.PullRequest == nil {
					out = append(out, forgeItem{is.State == "open", is.Body})
				}
			}
			return out
		},
		bodies: func() []string {
			var out []string
			for _, r := range gt.Received {
				out = append(out, r.Body)
			}
			return out
		},
		fault:  func(f func(http.ResponseWriter, *http.Request, int) bool) { gt.Fault = f },
		writes: func() int { return gt.Writes },
		close:  gt.Close,
	}

	bb := bitbuckettest.New(bitbuckettest.Cloud, "bitbucket-token-value")
	bitbucket := forgeUnderTest{name: "bitbucket-cloud", flag: "bitbucket", token: "bitbucket-token-value", run: "https://bitbucket.org/acme/gitops/pipelines/results/12",
		args: func(bool) []string { return []string{"--bitbucket-api-url", bb.APIURL()} },
		env: func(review bool) map[string]string {
			e := map[string]string{"CI": "true", "BITBUCKET_BUILD_NUMBER": "12", "BITBUCKET_PIPELINE_UUID": "{0b7e0c6e-8f51-4f4a-a3d4-5b2e7f0d1c9a}",
				"BITBUCKET_WORKSPACE": "acme", "BITBUCKET_REPO_SLUG": "gitops", "BITBUCKET_REPO_FULL_NAME": "acme/gitops", "BITBUCKET_COMMIT": forgeSHA,
				"BITBUCKET_BRANCH": "main", "BITBUCKET_PR_ID": "", "BITBUCKET_STEP_OIDC_TOKEN": "oidc-token-value",
				"DRIFT_BITBUCKET_TOKEN": "bitbucket-token-value", "DRIFT_BITBUCKET_AUTHOR": bitbuckettest.RepositoryBot.UUID}
			if review {
				e["BITBUCKET_PR_ID"], e["BITBUCKET_BRANCH"], e["BITBUCKET_PR_DESTINATION_BRANCH"] = "7", "feature", "main"
			}
			return e
		},
		notes: func() []forgeNote {
			var out []forgeNote
			for _, c := range bb.Comments() {
				out = append(out, forgeNote{fmt.Sprint(c.ID), c.Author.UUID, c.Text})
			}
			return out
		},
		addNote: func(body string) { bb.AddComment(bitbuckettest.Someone, body) },
		statuses: func() []string {
			var out []string
			for _, s := range bb.Statuses[forgeSHA] {
				out = append(out, fmt.Sprint(s["state"], " ", s["description"], " ", s["url"]))
			}
			return out
		},
		items: func() []forgeItem {
			var out []forgeItem
			for _, is := range bb.Issues {
				out = append(out, forgeItem{is.State == "new" || is.State == "open", is.Content})
			}
			return out
		},
		bodies: func() []string {
			var out []string
			for _, r := range bb.Received {
				out = append(out, r.Body)
			}
			return out
		},
		fault:  func(f func(http.ResponseWriter, *http.Request, int) bool) { bb.Fault = f },
		writes: func() int { return bb.Writes },
		close:  bb.Close,
	}

	az := azuretest.New("azure-job-token-value")
	azure := forgeUnderTest{name: "azure-devops-services", flag: "azure", token: az.Token, args: func(bool) []string { return nil },
		run: az.APIURL() + "shop/_build/results?buildId=12",
		env: func(review bool) map[string]string {
			e := map[string]string{"TF_BUILD": "True", "SYSTEM_COLLECTIONURI": az.APIURL(), "SYSTEM_TEAMPROJECT": "shop", "BUILD_REPOSITORY_NAME": "gitops",
				"BUILD_REPOSITORY_PROVIDER": "TfsGit", "BUILD_SOURCEVERSION": forgeSHA, "BUILD_BUILDID": "12", "SYSTEM_ACCESSTOKEN": az.Token,
				"BUILD_SOURCEBRANCH": "refs/heads/main", "SYSTEM_PULLREQUEST_PULLREQUESTID": ""}
			if review {
				e["SYSTEM_PULLREQUEST_PULLREQUESTID"], e["BUILD_SOURCEBRANCH"] = "7", "refs/pull/7/merge"
				e["SYSTEM_PULLREQUEST_TARGETBRANCH"], e["SYSTEM_PULLREQUEST_SOURCEBRANCH"] = "refs/heads/main", "refs/heads/feature"
			}
			return e
		},
		notes: func() []forgeNote {
			var out []forgeNote
			for _, th := range az.Threads(7) {
				out = append(out, forgeNote{fmt.Sprint(th.ID), th.Comments[0].Author.ID, th.Comments[0].Content})
			}
			return out
		},
		addNote: func(body string) { az.AddThread(7, azuretest.Someone, body, false) },
		statuses: func() []string {
			var out []string
			for _, s := range az.Statuses {
				out = append(out, fmt.Sprint(s["state"], " ", s["description"], " ", s["targetUrl"]))
			}
			return out
		},
		items: func() []forgeItem {
			var out []forgeItem
			for _, wi := range az.WorkItems {
				out = append(out, forgeItem{wi.Fields["System.State"] != "Done", fmt.Sprint(wi.Fields["System.Description"])})
			}
			return out
		},
		bodies: func() []string {
			var out []string
			for _, r := range az.Received {
				out = append(out, r.Body)
			}
			return out
		},
		fault:  func(f func(http.ResponseWriter, *http.Request, int) bool) { az.Fault = f },
		writes: func() int { return az.Writes },
		close:  az.Close,
	}
	// Bitbucket Data Center has no pipelines of its own: a Jenkins job gives every
	// part of where the report goes by flags, and a token.
	dc := bitbuckettest.New(bitbuckettest.DataCenter, "bitbucket-http-token")
	datacenter := bitbucket
	datacenter.name, datacenter.token, datacenter.noTracker = "bitbucket-data-center", "bitbucket-http-token", "no issue tracker"
	datacenter.run = "https://jenkins.example/job/gitops/7/"
	datacenter.env = func(bool) map[string]string {
		return map[string]string{"DRIFT_BITBUCKET_TOKEN": "bitbucket-http-token", "BUILD_URL": "https://jenkins.example/job/gitops/7/"}
	}
	datacenter.args = func(review bool) []string {
		args := []string{"--bitbucket-api-url", dc.APIURL(), "--bitbucket-repository", "GIT/gitops", "--bitbucket-sha", forgeSHA,
			"--bitbucket-run-url", "https://jenkins.example/job/gitops/7/"}
		if review {
			args = append(args, "--bitbucket-pr", "7")
		}
		return args
	}
	datacenter.notes = func() []forgeNote {
		var out []forgeNote
		for _, c := range dc.Comments() {
			out = append(out, forgeNote{fmt.Sprint(c.ID), c.Author.Name, c.Text})
		}
		return out
	}
	datacenter.addNote = func(body string) { dc.AddComment(bitbuckettest.Someone, body) }
	datacenter.statuses = func() []string {
		var out []string
		for _, s := range dc.Statuses[forgeSHA] {
			out = append(out, fmt.Sprint(s["state"], " ", s["description"], " ", s["url"]))
		}
		return out
	}
	datacenter.items = func() []forgeItem { return nil }
	datacenter.bodies = func() []string {
		var out []string
		for _, r := range dc.Received {
			out = append(out, r.Body)
		}
		return out
	}
	datacenter.fault = func(f func(http.ResponseWriter, *http.Request, int) bool) { dc.Fault = f }
	datacenter.writes = func() int { return dc.Writes }
	datacenter.close = dc.Close

	// Azure DevOps Server: the collection serves every area (ResourceAreas is empty).
	azs := azuretest.New("azure-server-token")
	azs.OnPremises = true
	server := azure
	server.name, server.token, server.run = "azure-devops-server", azs.Token, azs.APIURL()+"shop/_build/results?buildId=12"
	server.env = func(review bool) map[string]string {
		e := azure.env(review)
		e["SYSTEM_COLLECTIONURI"], e["SYSTEM_ACCESSTOKEN"] = azs.APIURL(), azs.Token
		return e
	}
	server.notes = func() []forgeNote {
		var out []forgeNote
		for _, th := range azs.Threads(7) {
			out = append(out, forgeNote{fmt.Sprint(th.ID), th.Comments[0].Author.ID, th.Comments[0].Content})
		}
		return out
	}
	server.addNote = func(body string) { azs.AddThread(7, azuretest.Someone, body, false) }
	server.statuses = func() []string {
		var out []string
		for _, s := range azs.Statuses {
			out = append(out, fmt.Sprint(s["state"], " ", s["description"], " ", s["targetUrl"]))
		}
		return out
	}
	server.items = func() []forgeItem {
		var out []forgeItem
		for _, wi := range azs.WorkItems {
			out = append(out, forgeItem{wi.Fields["System.State"] != "Done", fmt.Sprint(wi.Fields["System.Description"])})
		}
		return out
	}
	server.bodies = func() []string {
		var out []string
		for _, r := range azs.Received {
			out = append(out, r.Body)
		}
		return out
	}
	server.fault = func(f func(http.ResponseWriter, *http.Request, int) bool) { azs.Fault = f }
	server.writes = func() int { return azs.Writes }
	server.close = azs.Close
	return []forgeUnderTest{gitea, bitbucket, datacenter, azure, server}
}

// setForgeEnv sets the pipeline's variables of f, and unsets those of other CI
// systems the test process may have.
func setForgeEnv(t *testing.T, f forgeUnderTest, review bool) {
	t.Helper()
	for _, name := range []string{"GITHUB_ACTIONS", "GITLAB_CI", "TF_BUILD", "GITEA_ACTIONS", "FORGEJO_ACTIONS", "BITBUCKET_BUILD_NUMBER", "GITHUB_EVENT_PATH", "GITHUB_TOKEN"} {
		t.Setenv(name, "")
	}
	for k, v := range f.env(review) {
		t.Setenv(k, v)
	}
}

// TestForgesCommentAndStatusFromTheirPipelines runs drift diff --X-comment in a pull
// request pipeline of each forge of publish.Kinds: the context comes from the
// pipeline's variables alone; two runs leave one drift comment, updated in place,
// and another user's comment that carries drift's marker untouched; the status is
// set; no token reaches the output or a request body; a 403 leaves the exit code
// the diff's.
func TestForgesCommentAndStatusFromTheirPipelines(t *testing.T) {
	for _, f := range forgesUnderTest(t) {
		t.Run(f.name, func(t *testing.T) {
			defer f.close()
			setForgeEnv(t, f, true)
			ns := namespace(t)
			apply(t, "kubectl", cm(ns, "settings", "old"))
			// A manifest that quotes the token, and a mention, a reference and a
			// logging command: the token is scrubbed before anything is sent.
			r := repo(t, map[string]string{"settings.yaml": cm(ns, "settings", "new"),
				"tricky.yaml": cm(ns, "tricky", "\"@someone #1 !2 ##vso[task.setvariable variable=X]y "+f.token+"\"")})
			diff := func() outcome {
				t.Helper()
				o := drift(t, append([]string{"diff", "--repo", r.Dir, "--ref", "main", "--" + f.flag + "-comment"}, f.args(true)...)...)
				if o.code != 1 {
					t.Fatalf("exit %d\n%s", o.code, o.stderr)
				}
				return o
			}
			o := diff()
			notes := f.notes()
			if len(notes) != 1 || !strings.Contains(notes[0].body, "1 to add, 1 to modify") {
				t.Fatalf("notes = %+v\n%s", notes, o.stderr)
			}
			mine := notes[0]
			marker, _, _ := strings.Cut(mine.body, "\n")
			f.addNote(marker + "\nsomeone else's words")
			o = diff()
			notes = f.notes()
			if len(notes) != 2 || notes[0].id != mine.id || notes[0].author != mine.author || notes[1].body != marker+"\nsomeone else's words" {
				t.Fatalf("after the second run, notes = %+v\n%s", notes, o.stderr)
			}
			if !strings.Contains(o.stderr, "updated the pull request comment") {
				t.Errorf("second run: %s", o.stderr)
			}
			if st := f.statuses(); len(st) == 0 || !strings.Contains(st[len(st)-1], "1 to add, 1 to modify") || !strings.HasSuffix(st[len(st)-1], " "+f.run) {
				t.Errorf("statuses = %q", st)
			}
			for _, out := range []string{o.stdout, o.stderr} {
				if strings.Contains(out, f.token) {
					t.Error("the token reached the output")
				}
			}
			for _, b := range f.bodies() {
				if strings.Contains(b, f.token) {
					t.Errorf("a request body holds the token: %.200s", b)
				}
			}

			f.fault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"message":"forbidden"}`)
				return true
			})
			o = drift(t, append([]string{"diff", "--repo", r.Dir, "--ref", "main", "--" + f.flag + "-comment"}, f.args(true)...)...)
			if o.code != 1 || !strings.Contains(o.stderr, "403") {
				t.Errorf("403: exit %d\n%s", o.code, o.stderr)
			}
		})
	}
}

// TestForgesKeepTheirDriftItem runs drift detect --X-issue on a schedule of each
// forge of publish.Kinds: nothing is opened while the cluster matches, one item is
// opened when drift appears, nothing is written while it does not change, and the
// item is closed when the drift is gone.
func TestForgesKeepTheirDriftItem(t *testing.T) {
	for _, f := range forgesUnderTest(t) {
		t.Run(f.name, func(t *testing.T) {
			defer f.close()
			setForgeEnv(t, f, false)
			ns, files := driftScene(t)
			r := repo(t, files)
			run := func() string {
				t.Helper()
				o := drift(t, append([]string{"detect", "--repo", r.Dir, "--" + f.flag + "-issue"}, f.args(false)...)...)
				if o.code == 2 {
					t.Fatalf("exit 2\n%s", o.stderr)
				}
				return o.stderr
			}
			if f.noTracker != "" {
				// No tracker: detection says so and fails; its report is still written.
				edit(t, cmGVR, ns, "settings", `{"data":{"color":"red"}}`)
				o := drift(t, append([]string{"detect", "--repo", r.Dir, "--" + f.flag + "-issue", "-o", "json"}, f.args(false)...)...)
				if o.code != 2 || !strings.Contains(o.stderr, f.noTracker) || !strings.Contains(o.stdout, `"kind": "drift"`) {
					t.Fatalf("exit %d, want 2 saying %q with the report\n%s\n%.300s", o.code, f.noTracker, o.stderr, o.stdout)
				}
				return
			}
			if out := run(); !strings.Contains(out, "nothing to do") || f.writes() != 0 || len(f.items()) != 0 {
				t.Fatalf("no drift, yet: %s (writes %d)", out, f.writes())
			}
			edit(t, cmGVR, ns, "settings", `{"data":{"color":"red"}}`)
			if out := run(); !strings.Contains(out, "opened") {
				t.Fatalf("open: %s", out)
			}
			if items := f.items(); len(items) != 1 || !items[0].open || !strings.Contains(items[0].body, "1 to modify") {
				t.Fatalf("items = %+v", items)
			}
			writes := f.writes()
			if out := run(); !strings.Contains(out, "up to date") || f.writes() != writes {
				t.Fatalf("unchanged drift wrote: %s (%d writes)", out, f.writes()-writes)
			}
			for _, doc := range files {
				apply(t, "kubectl", doc)
			}
			if out := run(); !strings.Contains(out, "closed") {
				t.Fatalf("close: %s", out)
			}
			if items := f.items(); len(items) != 1 || items[0].open {
				t.Fatalf("after the drift is gone, items = %+v", items)
			}
		})
	}
}
