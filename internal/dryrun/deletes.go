package dryrun

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// Deletes are the deletions an applier makes on its own of objs (the objects a Helm
// release drops), recorded by inventory and copied from source: each is read and
// its delete dry-run; one already gone, or whose live copy keep says the applier
// leaves, is left out.
func Deletes(ctx context.Context, c *kube.Clients, objs []*unstructured.Unstructured, inventory, source string, keep func(live *unstructured.Unstructured) bool, opts Options) []Result {
	opts = opts.WithDefaults()
	var out []Result
	for _, obj := range objs {
		id := object.IDOf(obj)
		r := Result{ID: id, Inventory: inventory, Object: render.Object{Obj: obj, Source: source}}
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
		case live == nil || keep(live):
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
