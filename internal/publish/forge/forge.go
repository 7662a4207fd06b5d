// Package forge is what drift decides when it publishes to a forge (GitHub, GitLab),
// over the few primitives each forge's client offers: which note (a pull request's
// comment, a merge request's note) is drift's own and is updated, and how the drift
// issue follows the drift. The clients (internal/github, internal/gitlab) implement
// Forge; internal/publish decides what is published and calls these flows.
package forge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Marker is the hidden line a drift note starts with; the target set makes it one
// note per review and set of targets, the same on every forge.
func Marker(targets []string) string {
	t := append([]string(nil), targets...)
	sort.Strings(t)
	sum := sha256.Sum256([]byte(strings.Join(t, "\n")))
	return "<!-- drift:report targets=" + hex.EncodeToString(sum[:])[:16] + " -->"
}

// Note is a comment on a pull request or an issue, or a note on a merge request.
type Note struct {
	ID     int64
	Body   string
	Author string // the login (GitHub) or username (GitLab) that wrote it
}

// Issue is an issue as the flows need it; ID is its number (GitHub) or IID (GitLab).
type Issue struct {
	ID     int64
	Body   string
	Open   bool
	Author string
}

// IssueEdit changes an issue; nil fields are left as they are.
type IssueEdit struct {
	Title, Body *string
	Open        *bool
}

// Forge is one forge's client, for one review (pull or merge request) or repository.
// Each method returns an error that says what it tried to do and holds no token.
type Forge interface {
	// Self is the login drift writes as: only notes and issues it wrote are drift's.
	Self(ctx context.Context) (string, error)
	// Notes calls each with the review's notes, oldest first, page by page, until
	// each returns false.
	Notes(ctx context.Context, each func(Note) bool) error
	CreateNote(ctx context.Context, body string) (Note, error)
	UpdateNote(ctx context.Context, id int64, body string) error
	// Issues calls each with the issues labelled label, open and closed, until each
	// returns false.
	Issues(ctx context.Context, label string, each func(Issue) bool) error
	// EnsureLabel creates the label when the repository does not have it.
	EnsureLabel(ctx context.Context, label string) error
	CreateIssue(ctx context.Context, title, body, label string) (Issue, error)
	EditIssue(ctx context.Context, id int64, edit IssueEdit) error
	CommentOnIssue(ctx context.Context, id int64, body string) error
	// IssueRef is how the forge writes an issue's reference in prose ("#3").
	IssueRef(id int64) string
}

// Warn hears what the user should know but need not fail on; nil hears nothing.
type Warn func(msg string)

// Upsert writes body, after marker, as the review's drift note for this target set:
// it updates the oldest note that carries the marker and was written by drift's own
// login, or creates one (again, when someone deleted it). Anyone can post a note that
// starts with the marker; such notes are left alone with a warning naming their
// authors, as are drift notes of other target sets. noun names the note in it
// ("comment", "note"). It returns "created" or "updated".
func Upsert(ctx context.Context, f Forge, marker, body, noun string, warn Warn) (string, error) {
	full := marker + "\n" + body
	var (
		mine   *Note
		others []string
		err    error
		self   string
	)
	lerr := f.Notes(ctx, func(n Note) bool {
		if !strings.HasPrefix(n.Body, marker) {
			return true
		}
		var ok bool
		if ok, self, err = wroteBy(ctx, f, self, n.Author); err != nil {
			return false
		}
		if !ok {
			others = append(others, n.Author)
			return true
		}
		mine = &n
		return false
	})
	if lerr != nil {
		return "", lerr
	}
	if err != nil {
		return "", err
	}
	if mine != nil {
		if err := f.UpdateNote(ctx, mine.ID, full); err != nil {
			return "", err
		}
		return "updated", nil
	}
	leftAlone(warn, noun, others, self)
	if _, err := f.CreateNote(ctx, full); err != nil {
		return "", err
	}
	return "created", nil
}

// wroteBy says whether author is drift's own login, learning it on first need
// (self is what is known so far). Logins are case-insensitive on GitHub and GitLab.
func wroteBy(ctx context.Context, f Forge, self, author string) (bool, string, error) {
	if self == "" {
		var err error
		if self, err = f.Self(ctx); err != nil {
			return false, "", err
		}
	}
	return author != "" && strings.EqualFold(author, self), self, nil
}

// leftAlone warns of marked notes or issues drift did not write.
func leftAlone(warn Warn, what string, logins []string, self string) {
	if len(logins) == 0 || warn == nil {
		return
	}
	sort.Strings(logins)
	warn(fmt.Sprintf("left alone %d %s(s) that carry drift's marker but were written by %s, not by %s",
		len(logins), what, strings.Join(logins, ", "), self))
}

// FingerprintLine carries the findings' fingerprint in an issue's body.
func FingerprintLine(fp string) string { return "<!-- drift:fingerprint=" + fp + " -->" }

// DriftIssue keeps one issue, labelled label, for the target set named by marker:
// opened when drift appears, its body updated when the findings' fingerprint changes,
// closed with a comment when drift is gone, reopened when it comes back. Nothing is
// written when nothing changed. Only an issue that carries the marker and that
// drift's own login opened is drift's; the newest such is used. It returns what it
// did.
func DriftIssue(ctx context.Context, f Forge, label, marker, fingerprint string, drift bool, title, body string, warn Warn) (string, error) {
	issue, err := findIssue(ctx, f, label, marker, warn)
	if err != nil {
		return "", err
	}
	full := marker + "\n" + FingerprintLine(fingerprint) + "\n" + body
	switch {
	case !drift && (issue == nil || !issue.Open):
		return "nothing to do (no drift, no open issue)", nil
	case !drift:
		if err := f.CommentOnIssue(ctx, issue.ID, "The cluster matches the repository again: drift found no differences. Closing."); err != nil {
			return "", err
		}
		closed := false
		if err := f.EditIssue(ctx, issue.ID, IssueEdit{Open: &closed}); err != nil {
			return "", err
		}
		return "closed issue " + f.IssueRef(issue.ID), nil
	case issue == nil:
		if err := f.EnsureLabel(ctx, label); err != nil {
			return "", err
		}
		created, err := f.CreateIssue(ctx, title, full, label)
		if err != nil {
			return "", err
		}
		return "opened issue " + f.IssueRef(created.ID), nil
	case !issue.Open:
		open := true
		if err := f.EditIssue(ctx, issue.ID, IssueEdit{Open: &open, Title: &title, Body: &full}); err != nil {
			return "", err
		}
		return "reopened issue " + f.IssueRef(issue.ID), nil
	case strings.Contains(issue.Body, FingerprintLine(fingerprint)):
		return "issue " + f.IssueRef(issue.ID) + " is up to date (the drift did not change)", nil
	}
	if err := f.EditIssue(ctx, issue.ID, IssueEdit{Title: &title, Body: &full}); err != nil {
		return "", err
	}
	return "updated issue " + f.IssueRef(issue.ID), nil
}

// findIssue returns the newest issue with the marker that drift's own login opened,
// open or closed. Anyone can open an issue whose body starts with the marker; such
// issues are never edited, closed or reopened.
func findIssue(ctx context.Context, f Forge, label, marker string, warn Warn) (*Issue, error) {
	var (
		found  *Issue
		others []string
		self   string
		err    error
	)
	lerr := f.Issues(ctx, label, func(is Issue) bool {
		if !strings.HasPrefix(is.Body, marker) {
			return true
		}
		var ok bool
		if ok, self, err = wroteBy(ctx, f, self, is.Author); err != nil {
			return false
		}
		if !ok {
			others = append(others, is.Author)
		} else if found == nil || is.ID > found.ID {
			found = &is
		}
		return true
	})
	if lerr != nil {
		return nil, lerr
	}
	if err != nil {
		return nil, err
	}
	if found == nil {
		leftAlone(warn, "issue", others, self)
	}
	return found, nil
}
