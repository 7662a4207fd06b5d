package entry

import (
	"fmt"
	"sort"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/unified"
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
	Shard *report.Shard
	// Coverage are the files the change touches, with what reads them (a run with a
	// base: Base or BaseCommit set).
	Coverage []report.CoverageInput
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
	// Built are the entries of the target's objects built as their previews
	// finished (Builder.Take), in the order of its results: those results are in
	// neither Results nor Split.
	Built []Built
	// Elsewhere are the target's objects another shard previews (drift --shard): not
	// reported here, but their names and values are the run's, so that this shard's
	// part is scrubbed as a whole run's report is.
	Elsewhere []dryrun.Result
}

// KeptInput is a prune candidate an inventory lists that is not deleted.
type KeptInput struct {
	ID        object.ID
	Inventory string
	Reason    string
}

// AllResults are every result the target's report is made of that it still holds
// (not those Built).
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

// Build makes the report of a run: b, the run's one builder, learns every target
// (Learn) before it builds the entries of what is left, beside those it built as
// previews finished (TargetInput.Built); render failures, kept objects and notes are
// added here. Every message, diff and dumped object is scrubbed of every value of
// every Secret and masked field of the run, in whatever object's message it is
// quoted.
func Build(in Input, b *Builder) (*report.Report, error) {
	for _, ti := range in.Targets {
		b.Learn(ti.Known())
	}
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Ref: in.Ref, Commit: in.Commit, Cluster: in.Cluster,
		Base: in.Base, BaseCommit: in.BaseCommit, Targets: []report.Target{}, Config: configChange(in.Config), Shard: in.Shard}
	if in.Drift {
		rep.Kind = report.KindDrift
	}
	for _, ti := range in.Targets {
		t := report.Target{Name: ti.Name, Path: ti.Path, Renderer: ti.Renderer, Context: ti.Context, Applier: ti.Applier, Skipped: ti.Skipped, NotPreviewed: ti.NotPreviewed, Objects: []report.Object{}}
		for _, f := range ti.Failures {
			t.Objects = append(t.Objects, fromFailure(f))
		}
		objects, drift, err := b.Entries(ti)
		if err != nil {
			return nil, err
		}
		t.Objects = append(t.Objects, objects...)
		t.Drift = append(t.Drift, drift...)
		for _, k := range ti.Kept {
			t.Kept = append(t.Kept, report.Kept{ID: report.ID(k.ID),
				Inventory: k.Inventory, Reason: k.Reason})
		}
		t.Notes = append(t.Notes, ti.Notes...)
		rep.Targets = append(rep.Targets, t)
	}
	sort.SliceStable(rep.Targets, func(i, j int) bool { return rep.Targets[i].Name < rep.Targets[j].Name })
	scrubReport(b.Scrubber(), rep)
	if in.Base != "" || in.BaseCommit != "" {
		rep.Coverage = report.NewCoverage(in.Coverage)
	}
	rep.Settle()
	return rep, nil
}

// fromFailure is the error entry of what did not render or could not be read.
func fromFailure(f render.Failure) report.Object {
	var o report.Object
	if f.ID != nil {
		o = report.NewObject(report.ID(*f.ID), f.Source, f.Doc)
	} else {
		o = report.Object{Source: f.Source, Document: f.Doc, Warnings: []report.Message{}}
	}
	o.Category, o.Error, o.ErrorReason = report.Error, f.Message, f.Reason
	if f.Doc > 0 && f.Item > 0 {
		o.Error = fmt.Sprintf("item %d: %s", f.Item, f.Message)
	}
	return o
}

// configChange returns the report's note on the configuration, nil when the file is
// the same on both sides and nothing was left out.
func configChange(in *config.Change) *report.ConfigChange {
	if in == nil || (in.Base == in.Head && len(in.NotApplied) == 0) {
		return nil
	}
	return &report.ConfigChange{File: in.File, TrustedFrom: in.TrustedFrom, NotApplied: in.NotApplied,
		Diff: unified.Diff(in.Base, in.Head, "base/"+in.File, "head/"+in.File, report.DefaultContext)}
}
