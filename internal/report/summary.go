package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/reason"
)

// Line is the one-line summary: "2 to add, 1 to modify, 0 to delete, 3 unchanged, 1 error".
func (s Summary) Line() string {
	errs := "errors"
	if s.Error == 1 {
		errs = "error"
	}
	return fmt.Sprintf("%d to add, %d to modify, %d to delete, %d unchanged, %d %s",
		s.Add, s.Modify, s.Delete, s.Unchanged, s.Error, errs)
}

// Headline is the short title: "3 to add, 2 to modify, 1 error", or "no changes".
func (s Summary) Headline() string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(s.Add, "to add")
	add(s.Modify, "to modify")
	add(s.Delete, "to delete")
	switch {
	case s.Error == 1:
		parts = append(parts, "1 error")
	case s.Error > 1:
		parts = append(parts, fmt.Sprintf("%d errors", s.Error))
	}
	switch {
	case s.NotPreviewed == 1:
		parts = append(parts, "1 changed target not previewed")
	case s.NotPreviewed > 1:
		parts = append(parts, fmt.Sprintf("%d changed targets not previewed", s.NotPreviewed))
	}
	switch {
	case s.NotCovered == 1:
		parts = append(parts, "1 changed file read by nothing")
	case s.NotCovered > 1:
		parts = append(parts, fmt.Sprintf("%d changed files read by nothing", s.NotCovered))
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}

// Describe names what was diffed: "commit 1a2b3c4d5e6f (main)" or "the work tree",
// and, for an ephemeral server, against what.
func (r *Report) Describe() string {
	what := DescribeRef(r.Ref, r.Commit, func(s string) string { return s })
	if r.Kind == KindDrift {
		what = "drift check of " + what + " against the live cluster"
	}
	if r.Shard != nil {
		what += fmt.Sprintf(" (shard %d of %d: part of the run; drift report merge combines the shards)", r.Shard.Index, r.Shard.Count)
	}
	if r.Cluster != ClusterEphemeral {
		return what
	}
	if r.Base == "" {
		return what + " on an ephemeral API server that started empty (no --base), not a live cluster"
	}
	return what + " compared with " + DescribeRef(r.Base, r.BaseCommit, func(s string) string { return s }) +
		" on an ephemeral API server, not a live cluster"
}

// ClusterEphemeral marks reports made on a throwaway API server.
const ClusterEphemeral = "ephemeral"

// DescribeRef names a commit and its ref, each through quote: "commit 1a2b3c4d5e6f
// (main)", or "the work tree" when there is no commit.
func DescribeRef(ref, commit string, quote func(string) string) string {
	if commit == "" {
		return "the work tree"
	}
	short := commit
	if len(short) > 12 {
		short = short[:12]
	}
	if ref == "" || ref == commit {
		return "commit " + quote(short)
	}
	return fmt.Sprintf("commit %s (%s)", quote(short), quote(ref))
}

// IncompleteNote says why the report cannot be trusted as the whole story, naming the
// targets the change touches that were not previewed each through quote, as
// DescribeRef and ConfigChange.Lead name refs and files: a target's name is the
// repository's (a path, an Argo CD Application's name), so the markdown writer quotes
// it in a code span.
func (r *Report) IncompleteNote(quote func(string) string) string {
	var why []string
	if n := r.Summary.Error; n > 0 {
		why = append(why, Plural(n, "object", "objects")+" could not be previewed")
	}
	if n := r.Summary.NotPreviewed; n > 0 {
		var names []string
		for _, t := range r.Targets {
			if t.NotPreviewed && len(names) < 5 {
				names = append(names, quote(t.Name))
			}
		}
		if n > len(names) {
			names = append(names, fmt.Sprintf("%d more", n-len(names)))
		}
		why = append(why, fmt.Sprintf("%s the change touches %s not previewed (%s: why is in the skipped targets)",
			Plural(n, "target", "targets"), map[bool]string{true: "was", false: "were"}[n == 1], strings.Join(names, ", ")))
	}
	if n := r.Summary.NotCovered; n > 0 {
		var names []string
		for _, f := range r.Coverage.Files {
			if f.Incomplete && len(names) < 5 {
				names = append(names, f.Name(quote))
			}
		}
		if n > len(names) {
			names = append(names, fmt.Sprintf("%d more", n-len(names)))
		}
		why = append(why, fmt.Sprintf("the change touches %s that a controller could deploy from and that no target drift found reads (%s: see the coverage; add a drift.yaml target that renders it, or name it in drift.yaml's deploysNothing if nothing deploys it)",
			Plural(n, "file", "files"), strings.Join(names, ", ")))
	}
	fix := "Fix the errors and run again."
	if r.Summary.NotPreviewed > 0 || r.Summary.NotCovered > 0 {
		fix = "Fix what is said and run again."
	}
	return fmt.Sprintf("The report is incomplete: %s, so what applying this change does is not fully known. %s", strings.Join(why, "; "), fix)
}

// complete reports whether the report tells the whole story: no error, no target
// the change touches left unpreviewed, no file it touches read by nothing.
func (r *Report) complete() bool {
	return r.Summary.Error == 0 && r.Summary.NotPreviewed == 0 && r.Summary.NotCovered == 0
}

// notPreviewed counts the targets the change touches that drift could not preview.
func notPreviewed(targets []Target) int {
	n := 0
	for _, t := range targets {
		if t.NotPreviewed {
			n++
		}
	}
	return n
}

// MismatchNote says how many objects another applier than their target's applies, or
// nothing when none does.
func (r *Report) MismatchNote() string {
	n := r.Summary.ApplierMismatch
	if n == 0 {
		return ""
	}
	what := "objects are"
	if n == 1 {
		what = "object is"
	}
	return fmt.Sprintf("%d %s managed in the cluster by another applier than its target's (applier-mismatch): the prediction is for the target's applier and may be wrong. Each warning names the applier to set.", n, what)
}

// Display is the target's name as reports show it: its name, or for the repository
// root "the repository root" rather than ".".
func (t Target) Display() string { return DisplayName(t.Name) }

// DisplayName is a target's name as reports show it (Target.Display).
func DisplayName(name string) string {
	if name == "." || name == "" {
		return "repository root"
	}
	return name
}

// Fingerprint identifies a report's findings, whatever the commit or the time: every
// object that is not unchanged, with its category, identity, diff and error. Two drift
// checks with the same fingerprint found the same drift.
func Fingerprint(r *Report) string {
	h := sha256.New()
	for _, t := range r.Targets {
		fmt.Fprintf(h, "target %s %s\n", t.Name, t.Skipped)
		for _, o := range t.Objects {
			if o.Category == Unchanged {
				continue
			}
			fmt.Fprintf(h, "%s %s %s\n%s\n%s %s\n", o.Category, o.Title(), o.Source, o.Diff, o.ErrorReason, o.Error)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Plural is "1 object" or "3 objects".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// FirstLine is s's first line (ended by LF or CR, " …" marking the cut), cut at most
// runes: a message quoted in one line of a report.
func FirstLine(s string, most int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > most {
		s = string(r[:most-1]) + "…"
	}
	return s
}

// Settle works out what a report derives from its targets once they are whole:
// each target's objects and drift in order, the summary's counts, whether each
// file the change touches was previewed, and whether the report is complete.
// Building a report and merging shards' reports end with it.
func (r *Report) Settle() {
	for i := range r.Targets {
		sortObjects(r.Targets[i].Objects)
		sortObjects(r.Targets[i].Drift)
	}
	resolveCoverage(r)
	r.Summary = r.Counted()
	r.Complete = r.complete()
}

// Counted is the summary the report's targets and coverage give: what Settle
// records, and what a shard's report must hold.
func (r *Report) Counted() Summary {
	var s Summary
	for _, t := range r.Targets {
		s.add(t.Objects)
	}
	s.NotPreviewed = notPreviewed(r.Targets)
	s.NotCovered = notCovered(r.Coverage)
	return s
}

// Count counts one object of category into the summary.
func (s *Summary) Count(category string) {
	switch category {
	case Add:
		s.Add++
	case Modify:
		s.Modify++
	case Unchanged:
		s.Unchanged++
	case Delete:
		s.Delete++
	case Error:
		s.Error++
	}
}

// add counts objects into the summary.
func (s *Summary) add(objs []Object) {
	for _, o := range objs {
		s.Count(o.Category)
		if o.warned(reason.ApplierMismatch) {
			s.ApplierMismatch++
		}
		if len(o.Risks) > 0 {
			s.Risky++
		}
	}
}

// sortObjects orders objects by identity; unreadable documents (no identity) come
// first, by file and document.
func sortObjects(objs []Object) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if (a.Kind == "") != (b.Kind == "") {
			return a.Kind == ""
		}
		if a.ID != b.ID {
			return less(a.ID, b.ID)
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return a.Document < b.Document
	})
}
