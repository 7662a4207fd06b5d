package report

import (
	"fmt"
	"sort"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/scrub"
)

// Input is everything a report is built from.
type Input struct {
	Ref        string
	Commit     string
	Cluster    string
	Base       string
	BaseCommit string
	// Drift marks a drift check (drift detect): differences are drift.
	Drift   bool
	Targets []TargetInput
	// Config is drift.yaml on both sides of a pull request, when drift read its trusted
	// part from the base.
	Config *config.Change
	// Shard, when set, marks a shard's report (drift diff --shard).
	Shard *Shard
	// Coverage are the files the change touches, with what reads them (a run with a
	// base: Base or BaseCommit set).
	Coverage []CoverageInput
}

// TargetInput is one target's dry-run results and render failures.
type TargetInput struct {
	Name string
	// Path, Renderer and Context say what the target is (all optional).
	Path     string
	Renderer string
	Context  string
	// Applier names the applier the target was previewed for.
	Applier string
	// Skipped, when set, says why the target was not diffed; it then has no results.
	// NotPreviewed says the change touches it: the report is then incomplete.
	Skipped      string
	NotPreviewed bool
	Results      []dryrun.Result
	Failures     []render.Failure
	// Rules are the target's noise rules.
	Rules config.Rules
	// Kept are prune candidates that will not be deleted, and Notes what pruning
	// looked at.
	Kept  []KeptInput
	Notes []string
	// Split, when set, tells the pull request's change apart from drift already in
	// the cluster, object by object (see Split); Results then hold what has no base
	// prediction to compare with (what pruning deletes), diffed against the live
	// object.
	Split []Split
	// Taken counts the target's objects whose results the run's Builder took as their
	// previews finished (preview.Run streams them): the Builder holds their entries,
	// and they are in neither Results nor Split.
	Taken int
	// Elsewhere are the target's objects another shard previews (drift --shard): not
	// reported here, but their names and values are the run's, so that this shard's
	// part is scrubbed as a whole run's report is.
	Elsewhere []dryrun.Result
	// Pending are the identities of the target's objects whose results come later,
	// one by one (preview streams them): told first, so that their names are the
	// run's before any entry is built.
	Pending []object.ID
}

// KeptInput is a prune candidate an inventory lists that is not deleted.
type KeptInput struct {
	ID        object.ID
	Inventory string
	Reason    string
}

// AllResults are every result the target's report is made of that it still holds
// (not those Taken).
func (ti TargetInput) AllResults() []dryrun.Result {
	out := append([]dryrun.Result{}, ti.Results...)
	for _, s := range ti.Split {
		out = append(out, s.Head)
		if s.Base != nil {
			out = append(out, *s.Base)
		}
	}
	return out
}

// Builder builds the entries of a run's objects over the run's one scrubber
// (entry.Builder). The run makes one, feeds it as the preview finishes objects, and
// hands the same one to Build.
type Builder interface {
	// Prepare tells the scrubber a target's names, which the report shows anyway,
	// and the values of its Secrets and masked fields.
	Prepare(ti TargetInput)
	// Entries are the entries of a target's objects: those it took as their
	// previews finished (ti.Taken of them), then those of ti.Results and ti.Split,
	// in their order; drift holds the drift already in the cluster, when the target
	// splits the stories.
	Entries(ti TargetInput) (objects, drift []Object, err error)
	// Scrubber is the run's scrubber, which knows every value of the run once every
	// target is prepared.
	Scrubber() *scrub.Scrubber
}

// Build makes the report of a run: b, the run's one builder, is told every target
// (Prepare) before it gives any target's entries, the ones it built as previews
// finished and those of what is left; render failures, kept objects and notes are
// added here. Every message, diff and dumped object is scrubbed of every value of
// every Secret and masked field of the run, in whatever object's message it is
// quoted.
func Build(in Input, b Builder) (*Report, error) {
	for _, ti := range in.Targets {
		b.Prepare(ti)
	}
	rep := &Report{SchemaVersion: SchemaVersion, Ref: in.Ref, Commit: in.Commit, Cluster: in.Cluster,
		Base: in.Base, BaseCommit: in.BaseCommit, Targets: []Target{}, Config: configChange(in.Config), Shard: in.Shard}
	if in.Drift {
		rep.Kind = KindDrift
	}
	for _, ti := range in.Targets {
		t := Target{Name: ti.Name, Path: ti.Path, Renderer: ti.Renderer, Context: ti.Context, Applier: ti.Applier, Skipped: ti.Skipped, NotPreviewed: ti.NotPreviewed, Objects: []Object{}}
		for _, f := range ti.Failures {
			t.Objects = append(t.Objects, fromFailure(f))
		}
		objects, drift, err := b.Entries(ti)
		if err != nil {
			return nil, err
		}
		t.Objects = append(t.Objects, objects...)
		t.Drift = append(t.Drift, drift...)
		sortObjects(t.Objects)
		sortObjects(t.Drift)
		for _, k := range ti.Kept {
			t.Kept = append(t.Kept, Kept{ID: k.ID,
				Inventory: k.Inventory, Reason: k.Reason})
		}
		t.Notes = append(t.Notes, ti.Notes...)
		rep.Summary.add(t.Objects)
		rep.Targets = append(rep.Targets, t)
	}
	sort.SliceStable(rep.Targets, func(i, j int) bool { return rep.Targets[i].Name < rep.Targets[j].Name })
	scrubReport(b.Scrubber(), rep)
	rep.Coverage = coverage(in.Coverage, in.Base != "" || in.BaseCommit != "")
	resolveCoverage(rep)
	rep.Summary.NotPreviewed = notPreviewed(rep.Targets)
	rep.Summary.NotCovered = notCovered(rep.Coverage)
	rep.Complete = rep.complete()
	return rep, nil
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

// fromFailure is the error entry of what did not render or could not be read.
func fromFailure(f render.Failure) Object {
	var o Object
	if f.ID != nil {
		o = NewObject(*f.ID, f.Source, f.Doc)
	} else {
		o = Object{Source: f.Source, Document: f.Doc, Warnings: []dryrun.Message{}}
	}
	o.Category, o.Error, o.ErrorReason = Error, f.Message, f.Reason
	if f.Doc > 0 && f.Item > 0 {
		o.Error = fmt.Sprintf("item %d: %s", f.Item, f.Message)
	}
	return o
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
			return object.Less(a.ID, b.ID)
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return a.Document < b.Document
	})
}
