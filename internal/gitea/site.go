package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Site talks to Gitea's REST API v1 for one repository (and pull request).
type Site struct {
	client      *sdk.Client
	http        *http.Client
	ci          forge.CI
	owner, repo string
	self        string
	// labels are the repository's label IDs by name, as EnsureLabel found them:
	// Gitea gives an issue its labels by ID.
	labels map[string]int64
	mu     sync.Mutex
}

// pageSize is what drift asks a page to hold: Gitea's MAX_RESPONSE_ITEMS is 50 unless
// the instance sets it otherwise, and a larger limit is cut to it.
const pageSize = 50

// Open builds a client for the CI's API URL (https://gitea.example/api/v1). The token
// goes to the API URL's scheme, host and port only; redirects elsewhere are refused;
// rate limits are waited out as the answers say, a bounded number of times.
func Open(ci forge.CI, base http.RoundTripper) (forge.Site, error) {
	return open(ci, base, forge.Sleep)
}

func open(ci forge.CI, base http.RoundTripper, wait func(context.Context, time.Duration) error) (*Site, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	api := strings.TrimSuffix(ci.APIURL, "/")
	u, err := url.Parse(api)
	root, isV1 := strings.CutSuffix(api, "/api/v1")
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || !isV1 {
		return nil, fmt.Errorf("the Gitea API URL %q is not an http(s) URL that ends in /api/v1, such as https://gitea.example/api/v1 (GITHUB_API_URL, --gitea-api-url)", ci.APIURL)
	}
	owner, repo, ok := strings.Cut(ci.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("the Gitea repository %q is not owner/name (GITHUB_REPOSITORY, --gitea-repository)", ci.Repository)
	}
	hc := &http.Client{
		Transport: &forge.Transport{Next: base, Origin: forge.Origin(u), Credentials: credentials, Authorize: authorize(ci.Token),
			Retry: retry, Sleep: wait},
		CheckRedirect: forge.RefuseOtherOrigins(forge.Origin(u), "Gitea", "--gitea-api-url (GITHUB_API_URL)"),
		Timeout:       60 * time.Second,
	}
	// The transport authenticates, so the SDK holds no token. SetGiteaVersion("")
	// keeps the SDK from asking GET /version first: every endpoint drift uses is older
	// than any Gitea or Forgejo release still kept, and a Forgejo version
	// ("11.0.1+gitea-1.22.0") would be read as a Gitea one.
	client, err := sdk.NewClient(root, sdk.SetHTTPClient(hc), sdk.SetGiteaVersion(""), sdk.SetUserAgent("drift"))
	if err != nil {
		return nil, fmt.Errorf("the Gitea API URL %q: %w", ci.APIURL, err)
	}
	return &Site{client: client, http: hc, ci: ci, owner: owner, repo: repo, labels: map[string]int64{}}, nil
}

// with sets the SDK's context for the next call: the SDK takes one context per
// client, not per call, and a Site's calls are made one at a time.
func (s *Site) with(ctx context.Context) *sdk.Client {
	s.client.SetContext(ctx)
	return s.client
}

// Self is the token's user (GET /user): a person's or a bot account's, or the
// Actions user (gitea-actions, forgejo-actions) for a job token; CI.Author when set.
func (s *Site) Self(ctx context.Context) (string, error) {
	if s.self == "" && s.ci.Author != "" {
		s.self = s.ci.Author
	}
	if s.self != "" {
		return s.self, nil
	}
	u, resp, err := s.with(ctx).GetMyUserInfo()
	if err != nil {
		return "", s.explain("learn whom the token belongs to (GET /user)", resp, err)
	}
	if u.UserName == "" {
		return "", errors.New("Gitea's answer to GET /user has no login")
	}
	s.self = u.UserName
	return s.self, nil
}

// Notes lists the pull request's comments, oldest first. Gitea answers
// GET /repos/{owner}/{repo}/issues/{index}/comments with every comment at once
// (it reads no page or limit there); a next page is still followed should an
// instance's answer name one in its Link header.
func (s *Site) Notes(ctx context.Context, each func(forge.Note) bool) error {
	opts := sdk.ListIssueCommentOptions{ListOptions: sdk.ListOptions{Page: 1, PageSize: pageSize}}
	for {
		comments, resp, err := s.with(ctx).ListIssueComments(s.owner, s.repo, s.ci.PR, opts)
		if err != nil {
			return s.explain("list the pull request's comments", resp, err)
		}
		for _, c := range comments {
			if !each(forge.Note{ID: c.ID, Body: c.Body, Author: login(c.Poster)}) {
				return nil
			}
		}
		if resp == nil || resp.NextPage <= opts.Page {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

func login(u *sdk.User) string {
	if u == nil {
		return ""
	}
	return u.UserName
}

// CreateNote writes a comment on the pull request.
func (s *Site) CreateNote(ctx context.Context, body string) (forge.Note, error) {
	c, resp, err := s.with(ctx).CreateIssueComment(s.owner, s.repo, s.ci.PR, sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		return forge.Note{}, s.explain("write the pull request comment", resp, err)
	}
	return forge.Note{ID: c.ID, Body: c.Body, Author: login(c.Poster)}, nil
}

// UpdateNote edits a comment (PATCH /repos/{owner}/{repo}/issues/comments/{id}).
func (s *Site) UpdateNote(ctx context.Context, id int64, body string) error {
	if _, resp, err := s.with(ctx).EditIssueComment(s.owner, s.repo, id, sdk.EditIssueCommentOption{Body: body}); err != nil {
		return s.explain("update the drift comment", resp, err)
	}
	return nil
}

// SetStatus sets the commit status named s.Name on the head commit: success or
// failure, the counts as its description, the run's page as its link. Gitea keeps
// the three as they are (no length is checked) and refuses a commit the repository
// does not hold.
func (s *Site) SetStatus(ctx context.Context, st forge.Status) error {
	if s.ci.HeadSHA == "" {
		return errors.New("cannot set a commit status: the head commit is unknown (GITHUB_SHA, the pull request event, or --gitea-sha)")
	}
	name := st.Name
	if name == "" {
		name = "drift"
	}
	state := sdk.StatusSuccess
	if st.Failed {
		state = sdk.StatusFailure
	}
	_, resp, err := s.with(ctx).CreateStatus(s.owner, s.repo, s.ci.HeadSHA, sdk.CreateStatusOption{State: state, Context: name, Description: st.Description, TargetURL: st.Link})
	if err != nil && code(resp) == http.StatusInternalServerError {
		return s.scrubbed(http.StatusInternalServerError, fmt.Sprintf("Gitea could not set the commit status on %s (500): Gitea answers so when the repository "+
			"does not hold the commit; check --gitea-sha (GITHUB_SHA, the pull request's head): %v", s.ci.HeadSHA, err))
	}
	if err != nil {
		return s.explain("set the commit status", resp, err)
	}
	return nil
}

// Issues lists the repository's issues (not pull requests) labelled label, open and
// closed, page by page.
func (s *Site) Issues(ctx context.Context, label string, each func(forge.Issue) bool) error {
	opts := sdk.ListIssueOption{ListOptions: sdk.ListOptions{Page: 1, PageSize: pageSize}, State: sdk.StateAll, Type: sdk.IssueTypeIssue, Labels: []string{label}}
	for {
		issues, resp, err := s.with(ctx).ListRepoIssues(s.owner, s.repo, opts)
		if err != nil {
			return s.explain("list the drift issues", resp, err)
		}
		for _, is := range issues {
			if !each(forge.Issue{ID: is.Index, Body: is.Body, Open: is.State != sdk.StateClosed, Author: login(is.Poster)}) {
				return nil
			}
		}
		if resp == nil || resp.NextPage <= opts.Page {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// EnsureLabel finds the repository's label of that name, or creates it: Gitea's
// labels are given to an issue by ID, and Gitea would make a second label of a name
// that exists.
func (s *Site) EnsureLabel(ctx context.Context, label string) error {
	id, err := s.labelID(ctx, label)
	if err != nil || id > 0 {
		return err
	}
	l, resp, err := s.with(ctx).CreateLabel(s.owner, s.repo, sdk.CreateLabelOption{Name: label, Color: "#d93f0b",
		Description: "The cluster no longer matches the repository (drift detect)"})
	if err != nil {
		return s.explain("create the drift label", resp, err)
	}
	s.mu.Lock()
	s.labels[label] = l.ID
	s.mu.Unlock()
	return nil
}

// labelID is the ID of the repository's label named label (0 when it has none).
func (s *Site) labelID(ctx context.Context, label string) (int64, error) {
	s.mu.Lock()
	id := s.labels[label]
	s.mu.Unlock()
	if id > 0 {
		return id, nil
	}
	opts := sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: 1, PageSize: pageSize}}
	for {
		labels, resp, err := s.with(ctx).ListRepoLabels(s.owner, s.repo, opts)
		if err != nil {
			return 0, s.explain("read the repository's labels", resp, err)
		}
		for _, l := range labels {
			if l.Name == label {
				s.mu.Lock()
				s.labels[label] = l.ID
				s.mu.Unlock()
				return l.ID, nil
			}
		}
		if resp == nil || resp.NextPage <= opts.Page {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

// maxTitle is what Gitea keeps of an issue's title (its name column is a
// VARCHAR(255)).
const maxTitle = 255

// CreateIssue opens an issue with the label (EnsureLabel made sure it exists).
func (s *Site) CreateIssue(ctx context.Context, title, body, label string) (forge.Issue, error) {
	id, err := s.labelID(ctx, label)
	if err != nil {
		return forge.Issue{}, err
	}
	opt := sdk.CreateIssueOption{Title: cut(title, maxTitle), Body: body}
	if id > 0 {
		opt.Labels = []int64{id}
	}
	is, resp, err := s.with(ctx).CreateIssue(s.owner, s.repo, opt)
	if err != nil {
		return forge.Issue{}, s.explain("open the drift issue", resp, err)
	}
	return forge.Issue{ID: is.Index, Body: is.Body, Open: true, Author: login(is.Poster)}, nil
}

// EditIssue changes an issue's title, body or state (PATCH; Gitea answers 201).
func (s *Site) EditIssue(ctx context.Context, id int64, e forge.IssueEdit) error {
	opt := sdk.EditIssueOption{Body: e.Body}
	if e.Title != nil {
		opt.Title = cut(*e.Title, maxTitle)
	}
	what := "update the drift issue"
	if e.Open != nil {
		state, verb := sdk.StateClosed, "close the drift issue"
		if *e.Open {
			state, verb = sdk.StateOpen, "reopen the drift issue"
		}
		opt.State, what = &state, verb
	}
	if _, resp, err := s.with(ctx).EditIssue(s.owner, s.repo, id, opt); err != nil {
		return s.explain(what, resp, err)
	}
	return nil
}

// CommentOnIssue writes a comment on an issue.
func (s *Site) CommentOnIssue(ctx context.Context, id int64, body string) error {
	if _, resp, err := s.with(ctx).CreateIssueComment(s.owner, s.repo, id, sdk.CreateIssueCommentOption{Body: body}); err != nil {
		return s.explain("write a comment on the drift issue", resp, err)
	}
	return nil
}

// IssueRef is "#N".
func (s *Site) IssueRef(id int64) string { return "#" + strconv.FormatInt(id, 10) }
