package azure

import (
	"context"
	"errors"
	"sort"
	"unicode/utf16"

	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"

	"github.com/drift-gitops/drift/internal/publish/forge"
)

// MaxNoteBytes keeps a comment under Azure DevOps' limit on a pull request
// comment's content (150,000 characters: "A discussion comment cannot be longer than
// 150000 characters"), with room for the marker. Azure DevOps counts UTF-16 code
// units, and a body never has fewer UTF-8 bytes than UTF-16 units.
const MaxNoteBytes = 149000

// MaxStatusDescription is what drift keeps of a status's description: the status
// list shows one line; Azure DevOps' documentation gives no limit.
const MaxStatusDescription = 255

// A drift comment is the first comment of a pull request thread (comment id 1), a
// thread of its own: Note.ID is the thread's id.
const firstComment = 1

// Notes lists the pull request's threads that are not deleted, oldest first, each
// as its first comment. Azure DevOps answers GET .../threads with every thread at
// once (no paging); system threads (votes, pushes, "policy" updates) have a first
// comment of type system and are left out.
func (s *Site) Notes(ctx context.Context, each func(forge.Note) bool) error {
	gc, err := s.gitClient(ctx)
	if err != nil {
		return err
	}
	pr := int(s.ci.PR)
	threads, err := gc.GetThreads(ctx, git.GetThreadsArgs{Project: &s.project, RepositoryId: &s.repository, PullRequestId: &pr})
	if err != nil {
		return s.explain("list the pull request's comment threads", err)
	}
	ts := *threads
	sort.SliceStable(ts, func(i, j int) bool { return deref(ts[i].Id) < deref(ts[j].Id) })
	for _, t := range ts {
		if t.Id == nil || (t.IsDeleted != nil && *t.IsDeleted) || t.Comments == nil {
			continue
		}
		for _, c := range *t.Comments {
			if deref(c.Id) != firstComment {
				continue
			}
			if (c.IsDeleted != nil && *c.IsDeleted) || (c.CommentType != nil && *c.CommentType == git.CommentTypeValues.System) {
				break
			}
			if !each(forge.Note{ID: int64(*t.Id), Body: derefs(c.Content), Author: identityID(c.Author)}) {
				return nil
			}
			break
		}
	}
	return nil
}

// CreateNote starts a thread on the pull request with body as its one comment. The
// thread is created closed: Azure DevOps' "Check for comment resolution" branch
// policy blocks completion while a thread is active or pending, and drift's report
// is not a review comment anyone has to resolve. It stays in the pull request's
// overview, where a reviewer can reply to it.
func (s *Site) CreateNote(ctx context.Context, body string) (forge.Note, error) {
	gc, err := s.gitClient(ctx)
	if err != nil {
		return forge.Note{}, err
	}
	pr := int(s.ci.PR)
	parent := 0
	text := git.CommentTypeValues.Text
	closed := git.CommentThreadStatusValues.Closed
	thread := &git.GitPullRequestCommentThread{
		Comments: &[]git.Comment{{ParentCommentId: &parent, Content: &body, CommentType: &text}},
		Status:   &closed,
	}
	t, err := gc.CreateThread(ctx, git.CreateThreadArgs{CommentThread: thread, Project: &s.project, RepositoryId: &s.repository, PullRequestId: &pr})
	if err != nil {
		return forge.Note{}, s.explain("start the drift comment thread", err)
	}
	if t.Id == nil {
		return forge.Note{}, errors.New("Azure DevOps' answer to the new comment thread has no id")
	}
	n := forge.Note{ID: int64(*t.Id), Body: body}
	if t.Comments != nil && len(*t.Comments) > 0 {
		n.Author = identityID((*t.Comments)[0].Author)
	}
	return n, nil
}

// UpdateNote edits the first comment of thread id; the thread's status is left as
// it is.
func (s *Site) UpdateNote(ctx context.Context, id int64, body string) error {
	gc, err := s.gitClient(ctx)
	if err != nil {
		return err
	}
	pr, thread, comment := int(s.ci.PR), int(id), firstComment
	_, err = gc.UpdateComment(ctx, git.UpdateCommentArgs{Comment: &git.Comment{Content: &body}, Project: &s.project, RepositoryId: &s.repository,
		PullRequestId: &pr, ThreadId: &thread, CommentId: &comment})
	if err != nil {
		return s.explain("update the drift comment", err)
	}
	return nil
}

// SetStatus sets a pull request status (context genre "drift", name s.Name) when
// the run previews a pull request: it shows in the pull request's checks and can
// be made a required status in a branch policy. It needs "Contribute to pull
// requests" on the repository. Outside a pull request it sets a commit status on
// the head commit (it needs "Contribute"). succeeded or failed, the headline as its
// description (cut to MaxStatusDescription characters), and the run's page.
func (s *Site) SetStatus(ctx context.Context, st forge.Status) error {
	gc, err := s.gitClient(ctx)
	if err != nil {
		return err
	}
	name := st.Name
	if name == "" {
		name = "drift"
	}
	genre := "drift"
	state := git.GitStatusStateValues.Succeeded
	if st.Failed {
		state = git.GitStatusStateValues.Failed
	}
	desc := cut(st.Description, MaxStatusDescription)
	var link *string
	if st.Link != "" {
		link = &st.Link
	}
	sc := &git.GitStatusContext{Genre: &genre, Name: &name}
	if s.ci.PR > 0 {
		pr := int(s.ci.PR)
		_, err = gc.CreatePullRequestStatus(ctx, git.CreatePullRequestStatusArgs{Project: &s.project, RepositoryId: &s.repository, PullRequestId: &pr,
			Status: &git.GitPullRequestStatus{Context: sc, State: &state, Description: &desc, TargetUrl: link}})
		if err != nil {
			return s.explain("set the pull request status", err)
		}
		return nil
	}
	if s.ci.HeadSHA == "" {
		return errors.New("cannot set a commit status: the head commit is unknown (BUILD_SOURCEVERSION or --azure-sha)")
	}
	_, err = gc.CreateCommitStatus(ctx, git.CreateCommitStatusArgs{Project: &s.project, RepositoryId: &s.repository, CommitId: &s.ci.HeadSHA,
		GitCommitStatusToCreate: &git.GitStatus{Context: sc, State: &state, Description: &desc, TargetUrl: link}})
	if err != nil {
		return s.explain("set the commit status", err)
	}
	return nil
}

// cut keeps at most n UTF-16 units of s (Azure DevOps' characters), ending in "..."
// when it cut.
func cut(s string, n int) string {
	if len(utf16.Encode([]rune(s))) <= n {
		return s
	}
	r, units := []rune(s), 0
	for i, c := range r {
		units += utf16.RuneLen(c)
		if units > n-3 {
			return string(r[:i]) + "..."
		}
	}
	return s
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func derefs(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
