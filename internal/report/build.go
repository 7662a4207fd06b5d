package report

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/risk"
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
	Config *ConfigInput
	// Shard, when set, marks a shard's report (drift diff --shard).
	Shard *Shard
}

// TargetInput is one target's dry-run results and render failures.
type TargetInput struct {
	Name string
	// Path, Renderer and Context say what the target is (all optional).
	Path     string
	Renderer string
	Context  string
	// Applier names the applier profile the target was previewed for.
	Applier string
	// Skipped, when set, says why the target was not diffed; it then has no results.
	// NotPreviewed says the change touches it: the report is then incomplete.
	Skipped      string
	NotPreviewed bool
	Results      []dryrun.Result
	Failures     []render.Failure
	// Rules are the target's noise rules.
	Rules Rules
	// Kept are prune candidates that will not be deleted, and Notes what pruning
	// looked at.
	Kept  []KeptInput
	Notes []string
	// Split, when set, tells the pull request's change apart from drift already in
	// the cluster, object by object (see Split); Results then hold what has no base
	// prediction to compare with (what pruning deletes), diffed against the live
	// object.
	Split []Split
	// Built are the entries of objects whose results were dropped once their entries
	// were built (preview.Run streams them); built with the same Scrubber.
	Built Built
	// Elsewhere are the target's objects another shard previews (drift --shard): not
	// reported here, but their names and values are the run's, so that this shard's
	// part is scrubbed as a whole run's report is.
	Elsewhere []dryrun.Result
}

// diffSides are what the object's diff compares: kubectl diff's live and merged unless
// the report splits the stories.
func (o Object) diffSides() sides {
	if o.sides == (sides{}) {
		return sidesApply
	}
	return o.sides
}

// Sides name what a diff compares, in its headers and --dump's directories.
type sides struct{ from, to string }

var (
	// sidesApply is kubectl diff's: the live object against the merged prediction.
	sidesApply = sides{"live", "merged"}
	// sidesChange is a split report's change: the base's prediction against the head's.
	sidesChange = sides{"base", "head"}
	// sidesChangeLive is a split change without the base's prediction.
	sidesChangeLive = sides{"live", "head"}
	// sidesDrift is a split report's drift: the live object against the base's prediction.
	sidesDrift = sides{"live", "base"}
)

// Stories an object belongs to when a report splits them.
const (
	StoryChange = "change"
	StoryDrift  = "drift"
)

// KeptInput is a prune candidate an inventory lists that is not deleted.
type KeptInput struct {
	ID        object.ID
	Inventory string
	Reason    string
}

// Options control what a report may show.
type Options struct {
	// ShowSecrets leaves Secret values unmasked (local use only).
	ShowSecrets bool
	// Scrubber, when set, holds the credentials to scrub from the report; Build adds
	// the values of every Secret and masked field of the run, so that the caller can
	// scrub what it writes besides the report (warnings) of the same values.
	Scrubber *Scrubber
	// DisabledRisks are risk rules switched off (drift.yaml's risks.disable).
	DisabledRisks map[string]bool
	// Unified, when set, is the diffs' lines of context (-U); DefaultContext otherwise.
	Unified *int
}

func (o Options) context() int {
	if o.Unified == nil || *o.Unified < 0 {
		return DefaultContext
	}
	return *o.Unified
}

// Build classifies every result and computes its diff. Every message, diff and dumped
// object is scrubbed of every value of every Secret and masked field of the run, in
// whatever object's message it is quoted. Entries built ahead (TargetInput.Built) are
// taken as they are.
func Build(in Input, opts Options) (*Report, error) {
	b := NewBuilder(opts, in.Cluster)
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
		built, err := b.Entries(ti)
		if err != nil {
			return nil, err
		}
		t.Objects = append(append(t.Objects, ti.Built.objects...), built.objects...)
		t.Drift = append(append(t.Drift, ti.Built.drift...), built.drift...)
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
	b.sc.scrubReport(rep)
	rep.Summary.NotPreviewed = notPreviewed(rep.Targets)
	rep.Complete = rep.Summary.Error == 0 && rep.Summary.NotPreviewed == 0
	return rep, nil
}

// Builder builds a report's entries. preview.Run holds one to build each object's
// entry as soon as its dry run returns and drop the objects then (what keeps a run of
// 10,000 objects small); Build builds the rest with another over the same Scrubber.
//
// An entry is scrubbed of the values its builder's scrubber knows when it is built,
// so every target must be prepared (Prepare), with the previews of its Secrets and
// masked objects (Sensitive), before the first entry is built.
type Builder struct {
	opts      Options
	sc        *Scrubber
	ephemeral bool
}

// NewBuilder returns a builder with opts' scrubber (a new one if unset), for a report
// on cluster (ClusterEphemeral: a throwaway server drift loaded itself).
func NewBuilder(opts Options, cluster string) *Builder {
	if opts.Scrubber == nil {
		opts.Scrubber = NewScrubber()
	}
	return &Builder{opts: opts, sc: opts.Scrubber, ephemeral: cluster == ClusterEphemeral}
}

// Prepare tells the scrubber a target's names, which the report shows anyway, and
// the values of its Secrets and masked fields on every side its results hold.
func (b *Builder) Prepare(ti TargetInput) {
	b.sc.addPublic(ti.Name)
	for _, r := range append(ti.allResults(), ti.Elsewhere...) {
		b.sc.addPublic(r.ID.Name, r.ID.Namespace)
		if !b.opts.ShowSecrets {
			b.sc.addResult(r, ti.Rules)
		}
	}
	for _, k := range ti.Kept {
		b.sc.addPublic(k.ID.Name, k.ID.Namespace)
	}
}

// Sensitive reports whether the scrubber must know an object's previewed values
// before any entry is built: a Secret's, or an object's whose fields a mask rule
// masks. Other objects' values are never scrubbed from elsewhere.
func (b *Builder) Sensitive(id object.ID, rules Rules) bool {
	if b.opts.ShowSecrets {
		return false
	}
	return (id.Group == "" && id.Kind == "Secret") || len(rules.maskFor(id)) > 0
}

// Built are entries built ahead of Build, by a Builder's Entries.
type Built struct{ objects, drift []Object }

// Add appends more built entries.
func (x *Built) Add(more Built) {
	x.objects = append(x.objects, more.objects...)
	x.drift = append(x.drift, more.drift...)
}

// Len is the number of entries built.
func (x Built) Len() int { return len(x.objects) + len(x.drift) }

// Entries builds the entries of a target input's results and splits (not of its
// failures, kept objects or notes), in their order.
func (b *Builder) Entries(ti TargetInput) (Built, error) {
	var out Built
	split := ti.Split != nil
	add := func(r dryrun.Result, sd sides, story string) error {
		o, err := fromResult(r, b.opts, ti.Rules, b.sc, sd, b.ephemeral)
		if err != nil {
			return err
		}
		if o.Story = story; story == StoryDrift {
			if o.Category != Unchanged {
				out.drift = append(out.drift, o)
			}
			return nil
		}
		out.objects = append(out.objects, o)
		return nil
	}
	for _, r := range ti.Results {
		sd, story := sidesApply, ""
		if split {
			sd, story = sidesChangeLive, StoryChange
		}
		if err := add(r, sd, story); err != nil {
			return out, err
		}
	}
	for _, sp := range ti.Split {
		change, sd, drift := sp.stories()
		if err := add(change, sd, StoryChange); err != nil {
			return out, err
		}
		if drift != nil {
			if err := add(*drift, sidesDrift, StoryDrift); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// objectOf is an object's content, nil for an absent side.
func objectOf(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}

func (s *Summary) count(category string) {
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

func newObject(id object.ID, source string, doc int) Object {
	return Object{ID: id,
		Source: source, Document: doc, Warnings: []dryrun.Message{}, file: kubectlName(id), sides: sidesApply}
}

func fromFailure(f render.Failure) Object {
	var o Object
	if f.ID != nil {
		o = newObject(*f.ID, f.Source, f.Doc)
	} else {
		o = Object{Source: f.Source, Document: f.Doc, Warnings: []dryrun.Message{}}
	}
	o.Category, o.Error, o.ErrorReason = Error, f.Message, f.Reason
	if f.Doc > 0 && f.Item > 0 {
		o.Error = fmt.Sprintf("item %d: %s", f.Item, f.Message)
	}
	return o
}

// fromResult makes a result's line of the report; its messages are scrubbed later,
// with the rest of the report. sd names the sides compared; ephemeral says the live
// side was created by drift itself, in a throwaway server, so that its server-made
// identity changes with every run.
func fromResult(r dryrun.Result, opts Options, rules Rules, sc *Scrubber, sd sides, ephemeral bool) (Object, error) {
	o := newObject(r.ID, r.Object.Source, r.Object.Doc)
	o.sides = sd
	o.Inventory = r.Inventory
	masked := rules.maskFor(r.ID)
	for _, n := range r.Object.Notes {
		o.Warnings = append(o.Warnings, dryrun.Message{Reason: n.Reason, Message: n.Message})
	}
	for _, w := range r.Warnings {
		o.Warnings = append(o.Warnings, dryrun.Message{Reason: w.Reason, Message: w.Message})
	}
	if r.Err != nil {
		o.Category, o.Error, o.ErrorReason = Error, r.Err.Message, r.Err.Reason
		o.Risks = risk.Evaluate(risk.Change{ID: o.ID, Category: Error, ErrorReason: string(r.Err.Reason)}, opts.DisabledRisks)
		return o, nil
	}
	isNew := r.Live == nil
	ignored, managers := rules.ignoreFor(r.ID)
	owned := managedBy(r.Live, managers)
	live, merged := normalize(r.Live, ephemeral), normalize(r.Merged, isNew || ephemeral)
	if ephemeral {
		markAllocated(r.Object.Obj, nil, live)
		markAllocated(r.Object.Obj, nil, merged)
	} else {
		markAllocated(r.Object.Obj, live, merged)
	}
	applyIgnore(ignored, owned, live, merged)
	if err := applyJQ(rules.jqFor(r.ID), live, merged); err != nil {
		o.Category, o.Error, o.ErrorReason = Error, r.ID.Display()+": ignore rule: "+err.Error(), reason.Config
		return o, nil
	}
	if !opts.ShowSecrets && (isSecret(live) || isSecret(merged)) {
		maskSecrets(live, merged)
	}
	if !opts.ShowSecrets && len(masked) > 0 {
		applyMask(masked, live, merged)
	}
	var err error
	if o.live, err = toYAML(live); err != nil {
		return o, fmt.Errorf("failed to render live %s: %w", r.ID.Display(), err)
	}
	if same(live, merged) {
		o.merged = o.live // most objects are unchanged: one rendering, one string
	} else if o.merged, err = toYAML(merged); err != nil {
		return o, fmt.Errorf("failed to render merged %s: %w", r.ID.Display(), err)
	}
	switch {
	case r.Merged == nil && r.Live == nil:
		// An absent object the applier sends nothing for (Flux's ssa: Ignore): it
		// stays absent.
		o.Category = Unchanged
	case r.Merged == nil:
		o.Category = Delete
	case isNew:
		o.Category = Add
	case o.live == o.merged:
		o.Category = Unchanged
	default:
		o.Category = Modify
	}
	// Scrubbed after the comparison, so that a change of a scrubbed value still counts.
	if sc.scrubObjects(live, merged) {
		if o.live, err = toYAML(live); err != nil {
			return o, fmt.Errorf("failed to render live %s: %w", r.ID.Display(), err)
		}
		if o.merged, err = toYAML(merged); err != nil {
			return o, fmt.Errorf("failed to render merged %s: %w", r.ID.Display(), err)
		}
	}
	if o.Category != Unchanged {
		o.Diff = unifiedDiff(o.live, o.merged, sd.from+"/"+o.file, sd.to+"/"+o.file, opts.context())
	}
	if o.Category == Modify {
		o.Changes = fieldChanges(live.Object, merged.Object)
		o.What = whatChanged(o.Kind, o.Changes)
	}
	o.Risks = risk.Evaluate(risk.Change{ID: o.ID, Category: o.Category, Live: objectOf(live), Merged: objectOf(merged), CustomResources: r.CustomResources}, opts.DisabledRisks)
	return o, nil
}

// sortObjects orders objects by identity; unreadable documents (no identity) come
// first, by file and document.
// same reports whether two normalized objects are equal as data, so that their YAML
// is too; objects whose YAML is equal may still differ here (an int64 and a float64
// of the same number), and are then rendered and compared as YAML.
func same(a, b *unstructured.Unstructured) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(a.Object, b.Object)
}

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

func itoa(i int) string { return strconv.Itoa(i) }
