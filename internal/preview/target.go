package preview

import (
	"cmp"
	"fmt"
	"path"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/helm"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/prune"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Target is a planned target as it goes through the preview.
type Target struct {
	plan.Target
	// Rendered is the target's render (nil when it was not rendered).
	Rendered *render.Result
	// Results are the head's predictions, one per rendered object.
	Results []dryrun.Result
	// Pruned is what applying deletes (nil without pruning).
	Pruned *prune.Result
	// BasePredictions are the base's predictions, by index of Results, when a pull
	// request's change is told apart from drift (nil otherwise); an entry is nil
	// when the base does not render the object.
	BasePredictions []*dryrun.Result

	// conn is the cluster the target is previewed on.
	conn *cluster
	// renderErr is set when the target could not be rendered at all, connErr when
	// its cluster could not be reached.
	renderErr error
	connErr   error
	// cut says what the run's end (--timeout, a signal) left undone of the target:
	// its preview, or the reading of what applying it deletes ("": nothing).
	cut, deletesCut string
	// splitNote says why the change could not be told apart from drift; notes are
	// the target's other notes (what an ephemeral server was given for it).
	splitNote string
	notes     []string
	// helm is the deployed revision of the release the helm applier upgrades (nil:
	// an install, or another applier); helmDeletes what the upgrade deletes.
	helm        *helm.Release
	helmDeletes []dryrun.Result

	// renderedFirst says the target was rendered from the head before the
	// ephemeral server was loaded (renderHeadFirst); same marks, by index of its
	// rendered objects, those the change leaves as they are (leftAsIs).
	renderedFirst bool
	same          []bool

	// shared are the warnings of objects another target deploys to the same
	// cluster, by index, added once each one's preview is done (nil: none).
	shared []*dryrun.Message
	// previewed marks, by index, the objects whose preview ran; built holds the
	// entries of those the sink took as they returned (streaming), whose objects
	// were dropped.
	previewed []bool
	built     []*entry.Built

	// shard is the run's share this runner previews: first numbers the target's
	// first object among all targets' objects, and ownsTarget says whether the
	// target-wide work (failures, pruning, notes) is this runner's.
	shard      plan.Shard
	first      int
	ownsTarget bool
}

// owns reports whether this runner previews the target's i-th rendered object.
func (t *Target) owns(i int) bool {
	if t.shard.ByCluster {
		return t.ownsTarget
	}
	return t.shard.Owns(t.first + i)
}

// dryRunOptions are how the target's objects are previewed: as its applier applies
// them (the helm applier upgrading the release read), on its cluster.
func (t *Target) dryRunOptions(opts Options, appliers *applier.Registry) dryrun.Options {
	a := t.Applier
	if t.helm != nil {
		a = helm.Upgrading(t.helm)
	}
	return dryrun.Options{
		Applier:          a,
		Appliers:         appliers,
		Owner:            t.owner(t.conn),
		FieldManager:     t.FieldManager,
		ForceConflicts:   opts.ForceConflicts,
		Namespace:        t.namespaceIn(t.conn),
		Concurrency:      opts.Concurrency,
		RequestTimeout:   t.conn.RequestTimeout,
		DryRunAggregated: t.DryRunAggregated,
		CopySecrets:      opts.CopySecrets,
		// A Kustomization of the repository without targetNamespace: Flux defaults
		// no namespace (drift.yaml's flux targets keep their namespace as the default).
		RequireNamespace: t.Flux != nil && t.From != "" && t.Namespace == "" && t.Applier.Traits().Record == applier.FluxInventory,
	}
}

// owner is what the target's applier knows its objects by, from what the target
// declares.
func (t *Target) owner(cl *cluster) applier.Owner {
	d := applier.Declared{Target: t.Name, Release: t.release(cl)}
	if f := t.Flux; f != nil {
		d.Kustomization = applier.Owner{Name: f.Name, Namespace: f.Namespace}
	}
	if a := t.ArgoCD; a != nil {
		d.Application = applier.Owner{Name: a.Application, Namespace: a.Namespace, Tracking: a.Tracking, InstanceLabel: a.InstanceLabel}
	}
	return t.Applier.Owner(d)
}

// release is the Helm release the target's chart renders on its cluster (none when
// it renders no chart).
func (t *Target) release(cl *cluster) applier.Owner {
	if t.Spec.Renderer != render.RendererHelm {
		return applier.Owner{}
	}
	return applier.Owner{Name: t.Spec.Helm.ReleaseName, Namespace: cmp.Or(t.Spec.Helm.ReleaseNamespace, t.namespaceIn(cl))}
}

// controller is the controller whose record of what it applied is the target's
// inventory: the Flux Kustomization or Argo CD Application that applies it (nil for
// appliers that keep no record).
func (t *Target) controller() *prune.Controller {
	r := t.Applier.Traits().Record
	if r == applier.NoRecord {
		return nil
	}
	return &prune.Controller{Record: r, Owner: t.owner(t.conn), Prune: t.ControllerPrune, Source: cmp.Or(t.From, config.FileName)}
}

// namespaceIn is the target's default namespace on its cluster.
func (t *Target) namespaceIn(cl *cluster) string {
	if t.Namespace != "" || cl == nil {
		return t.Namespace
	}
	return cl.Namespace
}

// renderSpec completes the target's render spec with what its cluster says: the Helm
// release namespace and the capabilities.
func (t *Target) renderSpec(cl *cluster) render.Spec { return t.completeSpec(t.Spec, cl) }

// completeSpec is renderSpec of one of the target's specs (resolved by plan).
func (t *Target) completeSpec(spec render.Spec, cl *cluster) render.Spec {
	if spec.Renderer != render.RendererHelm {
		spec.Helm = render.HelmOptions{}
		return spec
	}
	if spec.Helm.ReleaseNamespace == "" {
		spec.Helm.ReleaseNamespace = t.namespaceIn(cl)
	}
	if cl == nil {
		return spec // planned without a cluster (Planned): Helm's default capabilities
	}
	if v, apis, err := cl.capabilities(); err == nil {
		spec.Helm.KubeVersion, spec.Helm.APIVersions = v, apis
	}
	if t.Applier.Traits().UpgradesRelease {
		// As helm upgrade renders: the next revision, lookup reading the cluster when
		// the trusted side grants it (plan.Target.Lookup).
		if t.Lookup {
			spec.Helm.Lookup = cl.lookupKey
		}
		if t.helm != nil {
			spec.Helm.Revision = t.helm.NextRevision
		}
	}
	return spec
}

// known is what the sink must know of the target once its first round is sent:
// every result its input holds, and the identity alone of those that pending
// names, whose previews may still be running (their other fields are being
// written).
func (t *Target) known(pending func(i int) bool) entry.Known {
	k := t.inputOf(pending).Known()
	for i := range t.Results {
		if !pending(i) {
			continue
		}
		k.Names = append(k.Names, t.Results[i].ID)
		if b := t.BasePredictions; b != nil && b[i] != nil && b[i] != &t.Results[i] {
			k.Names = append(k.Names, b[i].ID)
		}
	}
	return k
}

// input is the target's part of the report: of a shard, only its share.
func (t *Target) input() entry.TargetInput { return t.inputOf(nil) }

// inputOf is input without the results that leave names.
func (t *Target) inputOf(leave func(i int) bool) entry.TargetInput {
	in := entry.TargetInput{Name: t.Name, Path: displayRepoPath(t.Spec.Path), Renderer: t.Spec.Renderer,
		Context: t.Cluster.Context, Applier: string(t.Applier.Name()), Skipped: t.Skipped, NotPreviewed: t.NotPreviewed, Rules: t.Rules}
	for i := range t.Results {
		if leave != nil && leave(i) {
			continue
		}
		head := t.Results[i]
		var base *dryrun.Result
		if t.BasePredictions != nil {
			base = t.BasePredictions[i]
		}
		switch {
		case !t.owns(i):
			in.Elsewhere = append(in.Elsewhere, head)
		case i < len(t.built) && t.built[i] != nil:
			in.Built = append(in.Built, *t.built[i])
		case t.BasePredictions != nil:
			in.Split = append(in.Split, entry.Split{Head: head, Base: base})
		default:
			in.Results = append(in.Results, head)
		}
	}
	if t.BasePredictions != nil && in.Split == nil {
		in.Split = []entry.Split{}
	}
	if !t.ownsTarget && t.shard.Sharded() {
		return in
	}
	if t.splitNote != "" {
		in.Notes = append(in.Notes, t.splitNote)
	}
	in.Notes = append(in.Notes, t.notes...)
	in.Notes = append(in.Notes, t.Notes...)
	if t.Refused != "" && t.Skipped == "" {
		in.Failures = append(in.Failures, render.Failure{Source: cmp.Or(t.From, config.FileName), Reason: cmp.Or(t.RefusedReason, reason.Refused), Message: "not previewed: " + t.Refused})
	}
	if t.connErr != nil {
		in.Failures = append(in.Failures, render.Failure{Source: displayRepoPath(t.Spec.Path), Reason: reason.Unavailable,
			Message: "not previewed: " + t.connErr.Error()})
	}
	if t.renderErr != nil {
		in.Failures = append(in.Failures, render.Failure{Source: displayRepoPath(t.Spec.Path), Reason: reason.Invalid, Message: t.renderErr.Error()})
	}
	for _, cut := range []string{t.cut, t.deletesCut} {
		if cut != "" {
			in.Failures = append(in.Failures, render.Failure{Source: displayRepoPath(t.Spec.Path), Reason: reason.NotChecked, Message: cut})
		}
	}
	if f, ok := t.optionsUnused(); ok {
		in.Failures = append(in.Failures, f)
	}
	if t.Rendered != nil {
		in.Failures = append(in.Failures, t.Rendered.Failures...)
		in.Notes = append(in.Notes, t.Rendered.Notes...)
	}
	in.Results = append(in.Results, t.helmDeletes...)
	if t.Pruned != nil {
		in.Results = append(in.Results, t.Pruned.Deletes...)
		in.Failures = append(in.Failures, t.Pruned.Failures...)
		in.Notes = append(in.Notes, t.Pruned.Notes...)
		for _, k := range t.Pruned.Kept {
			in.Kept = append(in.Kept, entry.KeptInput{ID: k.ID, Inventory: k.Inventory, Reason: k.Reason})
		}
	}
	return in
}

// optionsUnused is the failure of a target whose drift.yaml entry sets Helm options
// while it renders with another renderer, which would ignore them.
func (t *Target) optionsUnused() (render.Failure, bool) {
	if t.Entry == nil || t.Entry.Helm == nil || t.Rendered == nil || t.Spec.Renderer == render.RendererHelm {
		return render.Failure{}, false
	}
	for _, f := range t.Rendered.Failures {
		if f.Source == displayRepoPath(t.Spec.Path) && f.Doc == 0 {
			return render.Failure{}, false // the target as a whole failed, and says why (a chart without Chart.yaml)
		}
	}
	return render.Failure{Source: config.FileName, Reason: reason.Config, Message: fmt.Sprintf(
		"target %s sets helm options, but %s renders with %s, which ignores them: remove helm: from the target, or set renderer: helm if %s is a chart",
		t.Name, displayRepoPath(t.Spec.Path), t.Spec.Renderer, displayRepoPath(t.Spec.Path))}, true
}

func displayRepoPath(p string) string {
	if p == "" {
		return "."
	}
	return path.Clean(p)
}
