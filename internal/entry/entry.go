package entry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/risk"
	"github.com/drift-gitops/drift/internal/scrub"
	"github.com/drift-gitops/drift/internal/unified"
)

// build makes one result's line of the report: sd names the sides its diff compares,
// story the story it tells when the report splits them. Its messages are scrubbed
// later, with the rest of the report (Build).
func (b *Builder) build(r dryrun.Result, rs *rules, sd report.Sides, story string) (report.Object, error) {
	o := report.NewObject(report.ID(r.ID), r.Object.Source, r.Object.Doc)
	o.Sides, o.Inventory, o.Story = sd, r.Inventory, story
	for _, n := range r.Object.Notes {
		o.Warnings = append(o.Warnings, report.Message{Reason: n.Reason, Message: n.Message})
	}
	for _, w := range r.Warnings {
		o.Warnings = append(o.Warnings, report.Message{Reason: w.Reason, Message: w.Message})
	}
	if r.Err != nil {
		o.Category, o.Error, o.ErrorReason = report.Error, r.Err.Message, r.Err.Reason
		o.Risks = risks(risk.Evaluate(risk.Change{ID: r.ID, Category: report.Error, ErrorReason: string(r.Err.Reason)}, b.opts.DisabledRisks))
		return o, nil
	}
	if r.Same {
		// Left as it is by the change on a throwaway server: unchanged, never sent
		// (no risk rule finds anything in an unchanged object).
		o.Category = report.Unchanged
		return o, nil
	}
	if b.unchangedAsIs(r, rs) {
		o.Category = report.Unchanged
		return o, nil
	}
	live, merged, err := b.sides(r, rs)
	if err != nil {
		o.Category, o.Error, o.ErrorReason = report.Error, r.ID.Display()+": ignore rule: "+err.Error(), reason.Config
		return o, nil
	}
	equal := same(live, merged)
	// Scrubbed before the YAML is rendered, once per side; whether the sides differ
	// is decided on what they were before, so that a change of a scrubbed value still
	// counts.
	scrubbed, differ := scrubSides(b.sc, live, merged, !equal)
	// Most objects are unchanged: their YAML is rendered only for --dump and
	// KUBECTL_EXTERNAL_DIFF, once, one string for both sides.
	if !equal || b.opts.UnchangedYAML {
		if o.FromYAML, err = toYAML(live); err != nil {
			return o, fmt.Errorf("failed to render live %s: %w", r.ID.Display(), err)
		}
	}
	if equal {
		o.ToYAML = o.FromYAML
	} else if o.ToYAML, err = toYAML(merged); err != nil {
		return o, fmt.Errorf("failed to render merged %s: %w", r.ID.Display(), err)
	}
	if !scrubbed && !equal {
		differ = o.FromYAML != o.ToYAML
	}
	switch {
	case r.Merged == nil && r.Live == nil:
		// An absent object the applier sends nothing for (Flux's ssa: Ignore): it
		// stays absent.
		o.Category = report.Unchanged
	case r.Merged == nil:
		o.Category = report.Delete
	case r.Live == nil:
		o.Category = report.Add
	case equal || !differ:
		o.Category = report.Unchanged
	default:
		o.Category = report.Modify
	}
	// An encrypted Secret whose encrypted document changes, which no key of the
	// runner's decrypts: it changes, its values unknown (its warning says why).
	opaque := o.Category == report.Unchanged && r.Live != nil && dryrun.EncryptedChange(r.Object)
	if opaque {
		o.Category = report.Modify
	}
	if o.Category != report.Unchanged {
		o.Diff = unified.Diff(o.FromYAML, o.ToYAML, sd.From+"/"+o.File, sd.To+"/"+o.File, b.context())
	}
	if o.Category == report.Modify {
		o.Changes = fieldChanges(live.Object, merged.Object)
		o.What = whatChanged(o.Kind, o.Changes)
	}
	if opaque {
		// No hunk to show: a diff that says so, whose values stay unknown.
		o.What = "encrypted values change (not compared: no SOPS key)"
		o.Diff = "--- " + sd.From + "/" + o.File + "\n+++ " + sd.To + "/" + o.File +
			"\n\\ encrypted with SOPS and not decrypted: its encrypted document changes; its values are not compared\n"
	}
	o.Risks = risks(risk.Evaluate(risk.Change{ID: r.ID, Category: o.Category, Live: objectOf(live), Merged: objectOf(merged), CustomResources: r.CustomResources}, b.opts.DisabledRisks))
	return o, nil
}

// unchangedAsIs reports whether r's prediction is its live object field for field
// (as every answer the dry-run cache keeps as sameAsLive is), so that its entry is
// unchanged without its sides being normalized, scrubbed or compared: both sides
// would go through the same steps (sides) and stay equal, no risk rule finds
// anything in an unchanged object, and no YAML is rendered for one. Not when the
// YAML is asked for (UnchangedYAML), an ignore rule's jq expression applies (it may
// fail: an error entry), or the object is an encrypted Secret whose encrypted
// document changes (a modification whose values are unknown).
func (b *Builder) unchangedAsIs(r dryrun.Result, rs *rules) bool {
	if b.opts.UnchangedYAML || r.Live == nil || r.Merged == nil || dryrun.EncryptedChange(r.Object) {
		return false
	}
	if _, _, jq := rs.ignoreFor(r.ID); len(jq) > 0 {
		return false
	}
	return r.Live == r.Merged || object.JSONEqual(r.Live.Object, r.Merged.Object)
}

// risks are the findings of the risk rules as the report holds them.
func risks(findings []risk.Finding) []report.Risk {
	if findings == nil {
		return nil
	}
	out := make([]report.Risk, len(findings))
	for i, f := range findings {
		out[i] = report.Risk(f)
	}
	return out
}

// sides are the two sides of a result as the report shows them: normalized, values
// the server allocated marked, ignored fields left out, Secrets and masked fields
// masked. The error is an ignore rule's jq expression's.
func (b *Builder) sides(r dryrun.Result, rs *rules) (live, merged *unstructured.Unstructured, err error) {
	isNew := r.Live == nil
	pointers, managers, jq := rs.ignoreFor(r.ID)
	owned := managedBy(r.Live, managers)
	live, merged = normalize(r.Live, b.opts.Ephemeral), normalize(r.Merged, isNew || b.opts.Ephemeral)
	if b.opts.Ephemeral {
		// The live side was created by drift itself, in a throwaway server: what
		// the server allocated changes with every run.
		markAllocated(r.Object.Get(), nil, live)
		markAllocated(r.Object.Get(), nil, merged)
		for _, u := range []*unstructured.Unstructured{live, merged} {
			markConditionTimes(u)
			markOwnerUID(u)
		}
	} else {
		markAllocated(r.Object.Get(), live, merged)
	}
	applyIgnore(pointers, owned, live, merged)
	if err := applyJQ(jq, live, merged); err != nil {
		return nil, nil, err
	}
	if b.opts.ShowSecrets {
		return live, merged, nil
	}
	if scrub.IsSecret(live) || scrub.IsSecret(merged) {
		maskSecrets(live, merged)
	}
	if masked := rs.maskFor(r.ID); len(masked) > 0 {
		applyMask(masked, live, merged)
	}
	return live, merged, nil
}

// same reports whether two normalized objects are equal as data, so that their YAML
// is too; objects whose YAML is equal may still differ here (an int64 and a float64
// of the same number): build then compares their YAML, or their JSON when scrubbing
// changed them.
func same(a, b *unstructured.Unstructured) bool {
	if a == nil || b == nil {
		return a == b
	}
	return object.JSONEqual(a.Object, b.Object)
}

// objectOf is an object's content, nil for an absent side.
func objectOf(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}
