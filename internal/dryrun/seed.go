package dryrun

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Seed applies objects for real (server-side apply, forced) into a server that drift
// owns, such as the ephemeral one, as the profile's applier leaves them: with what
// it adds (Flux's labels, Argo CD's tracking, Helm's release metadata, kubectl's
// last-applied annotation), as its field manager. CustomResourceDefinitions
// and Namespaces go first, and the REST mapping is refreshed once the CRDs are
// established. It returns the objects that could not be applied.
func Seed(ctx context.Context, c *Clients, objs []render.Object, opts Options) []Result {
	opts = opts.withDefaults()
	var first, rest []render.Object
	for _, o := range objs {
		gk := o.ID().GroupKind()
		if gk == (schema.GroupKind{Kind: "Namespace"}) || gk == (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			first = append(first, o)
		} else {
			rest = append(rest, o)
		}
	}
	failed := seedAll(ctx, c, first, opts)
	if err := waitForCRDs(ctx, c, first); err != nil {
		failed = append(failed, Result{Err: &Message{Reason: ReasonUnavailable, Message: err.Error()}})
	}
	c.Mapper.Reset()
	return append(failed, seedAll(ctx, c, rest, opts)...)
}

func seedAll(ctx context.Context, c *Clients, objs []render.Object, opts Options) []Result {
	results := plan(c, objs, opts.Namespace, nil)
	forEachPlanned(results, opts.Concurrency, func(r *Result) {
		res, err := resourceFor(c, r.ID)
		if err != nil {
			r.Err = mappingError(r.ID, err)
			return
		}
		body, err := seedBody(r, opts)
		if err == nil {
			force := true
			rctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			_, err = res.Patch(rctx, r.ID.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: opts.FieldManager, Force: &force})
			cancel()
		}
		if err != nil {
			r.Err = requestError(c, "apply", r, err)
		}
	})
	var failed []Result
	for _, r := range results {
		if r.Err != nil {
			failed = append(failed, r)
		}
	}
	return failed
}

func waitForCRDs(ctx context.Context, c *Clients, objs []render.Object) error {
	for _, o := range objs {
		if o.ID().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			crd, err := c.Dynamic.Resource(crdResource).Get(ctx, o.ID().Name, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("CustomResourceDefinition %s did not become established within 30s", o.ID().Name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// Keys returns the identities of objects as written.
func Keys(objs []render.Object) map[object.Key]bool {
	out := make(map[object.Key]bool, len(objs))
	for _, o := range objs {
		out[o.ID().Key()] = true
	}
	return out
}

// seedBody is the object as the profile's applier leaves it in the cluster.
func seedBody(r *Result, opts Options) ([]byte, error) {
	obj, _, err := prepared(r, nil, opts)
	if err != nil {
		return nil, err
	}
	switch opts.Profile.Method {
	case ClientSide:
		modified, err := modifiedConfiguration(obj)
		if err != nil {
			return nil, err
		}
		obj = &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(modified); err != nil {
			return nil, err
		}
	case HelmUpgrade:
		if !isHelmHook(r.Object) {
			SetHelmMetadata(obj, opts.Owner.Name, opts.Owner.Namespace)
		}
	}
	return patchBody(r, obj)
}
