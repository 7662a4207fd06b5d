package dryrun

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// helm upgrade: Helm's three-way patch between the previous release's copy, the live
// object and the new one, with Helm's labels and annotations, as the helm CLI's field
// manager. Owner is the release.
var helmProfile = &Profile{
	Name:         "helm",
	Method:       HelmUpgrade,
	Manager:      HelmFieldManager,
	FixedManager: true,
	Managers:     []string{HelmFieldManager},
	Doc:          "helm upgrade (the three-way patch from the release's previous manifest, with Helm's labels and annotations)",
}

func init() { register(helmProfile) }

// previewHelm sends, with dryRun=All, what `helm upgrade` sends for one object of the
// release opts.Owner names, whose deployed revision is opts.Helm (nil: an install).
// A hook is created by Helm outside the release, so it is previewed as created
// anew: a dry-run create when absent, else a forced apply of the hook as written.
func previewHelm(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, opts Options) {
	if isHelmHook(r.Object) {
		previewServerSide(ctx, c, res, r, opts)
		return
	}
	for attempt := 1; ; attempt++ {
		live, err := read(ctx, c, res, r, attempt, opts)
		if err != nil {
			r.Err = requestError(c, "get", r, err)
			return
		}
		rendered := r.Object
		rendered.Obj = asWritten(r)
		plan, err := PlanHelm(opts.Helm, rendered, live, opts.Owner.Name, opts.Owner.Namespace)
		if err != nil {
			why := reason.Invalid
			if errors.Is(err, ErrNotInRelease) {
				why = reason.Conflict
			}
			r.Err = &Message{Reason: why, Message: r.ID.Display() + ": " + err.Error()}
			return
		}
		if plan.Untouched != "" {
			untouched(r, live, plan.Desired, plan.Untouched, opts)
			return
		}
		merged, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			defer cancel()
			return PreviewHelm(ctx, res, plan.Original, live, plan.Desired)
		})
		if !settle(c, r, live, merged, err, attempt, opts) {
			return
		}
	}
}

func isHelmHook(o render.Object) bool {
	for _, n := range o.Notes {
		if n.Reason == reason.HelmHook {
			return true
		}
	}
	return false
}

// HelmDeletes are what `helm upgrade` deletes: the objects of the deployed revision
// that the chart no longer renders (results holds the rendered ones, namespaces
// defaulted), unless their live copy says helm.sh/resource-policy: keep. Each is read
// and its delete dry-run; one already gone is left out.
func HelmDeletes(ctx context.Context, c *kube.Clients, rel *HelmRelease, results []Result, opts Options) []Result {
	if rel == nil {
		return nil
	}
	opts = opts.withDefaults()
	ids := make([]object.ID, 0, len(results))
	for _, r := range results {
		ids = append(ids, r.ID)
	}
	var out []Result
	for _, obj := range rel.Dropped(ids) {
		id := object.IDOf(obj)
		r := Result{ID: id, Inventory: fmt.Sprintf("Helm release %s/%s revision %d", rel.Namespace, rel.Name, rel.Revision),
			Object: render.Object{Obj: obj, Source: fmt.Sprintf("release %s revision %d", rel.Name, rel.Revision)}}
		res, err := c.ResourceFor(id)
		if err != nil {
			r.Err = mappingError(id, err)
			out = append(out, r)
			continue
		}
		live, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			return kube.Get(ctx, res, id.Name, false, opts.RequestTimeout)
		})
		switch {
		case err != nil:
			r.Err = requestError(c, "get", &r, err)
		case live == nil || HelmKeeps(live):
			continue
		default:
			r.Live = live
			dctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			prop := metav1.DeletePropagationBackground
			if err := res.Delete(dctx, id.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: &prop}); err != nil {
				r.Err = requestError(c, "delete", &r, err)
			}
			cancel()
		}
		out = append(out, r)
	}
	return out
}
