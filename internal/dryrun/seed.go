package dryrun

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/serverside"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Seed writes objects for real into a server that drift owns, such as the ephemeral
// one, as their applier leaves them (created by a client-side applier, else
// applied server-side, forced): with what
// it adds (Flux's labels, Argo CD's tracking, Helm's release metadata, kubectl's
// last-applied annotation), as its field manager. CustomResourceDefinitions
// and Namespaces go first, and the REST mapping is refreshed once the CRDs are
// established. It returns the objects that could not be applied.
func Seed(ctx context.Context, c *kube.Clients, objs []render.Object, opts Options) []Result {
	opts = opts.withDefaults()
	var first, rest []render.Object
	for _, o := range objs {
		gk := o.ID().GroupKind()
		if object.IsScaffolding(gk) {
			first = append(first, o)
		} else {
			rest = append(rest, o)
		}
	}
	failed := seedAll(ctx, c, first, opts)
	if err := waitForCRDs(ctx, c, first); err != nil {
		failed = append(failed, Result{Err: &Message{Reason: reason.Unavailable, Message: err.Error()}})
	}
	c.Mapper.Reset()
	return append(failed, seedAll(ctx, c, rest, opts)...)
}

func seedAll(ctx context.Context, c *kube.Clients, objs []render.Object, opts Options) []Result {
	results := plan(c, objs, opts.Namespace, nil)
	forEachPlanned(results, nil, opts.Concurrency, nil, func(_ int, r *Result) {
		res, err := c.ResourceFor(r.ID)
		if err != nil {
			r.Err = mappingError(r.ID, err)
			return
		}
		left, err := seedBody(r, opts)
		if err == nil {
			err = seedOne(ctx, c, res, r.ID.Name, left, opts)
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

// seedOne writes one object as its applier left it: created (a client-side applier:
// an Update in managedFields, as its manager), or applied server-side. An object
// already there is applied over.
func seedOne(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, name string, left seeded, opts Options) error {
	body := left.body
	if left.Created {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(body); err != nil {
			return err
		}
		_, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			defer cancel()
			return res.Create(ctx, obj, metav1.CreateOptions{FieldManager: opts.FieldManager})
		})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	force := true
	_, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return res.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: opts.FieldManager, Force: &force})
	})
	return err
}

// crdEstablishedTimeout bounds the wait for a seeded CRD to be served.
const crdEstablishedTimeout = 30 * time.Second

// waitForCRDs waits until every CRD among objs is established, so that its custom
// resources can be seeded; it ends early with ctx.
func waitForCRDs(ctx context.Context, c *kube.Clients, objs []render.Object) error {
	for _, o := range objs {
		if o.ID().GroupKind() != object.CRDKind {
			continue
		}
		name := o.ID().Name
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, crdEstablishedTimeout, true, func(ctx context.Context) (bool, error) {
			crd, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			return err == nil && established(crd), nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for CustomResourceDefinition %s to be established: %w", name, context.Cause(ctx))
			}
			return fmt.Errorf("CustomResourceDefinition %s did not become established within %s", name, crdEstablishedTimeout)
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

// seeded is an object as its applier leaves it, and the body to send.
type seeded struct {
	applier.Left
	body []byte
}

// seedBody is the object as its applier leaves it in the cluster.
func seedBody(r *Result, opts Options) (seeded, error) {
	obj, _, err := prepared(r, nil, opts)
	if err != nil {
		return seeded{}, err
	}
	o := applier.Object{ID: r.ID, Obj: obj, Owner: opts.Owner, Manager: opts.FieldManager, Notes: notes(r.Object)}
	left, err := opts.Applier.Leaves(o)
	if err != nil {
		return seeded{}, err
	}
	o.Obj = left.Obj
	body, err := serverside.Body(o)
	return seeded{Left: left, body: body}, err
}
