package ephemeral

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier/serverside"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Seed writes objects for real into a server that drift owns, such as the ephemeral
// one, as opts.Applier leaves them (created by a client-side applier, else applied
// server-side, forced): with what it adds (Flux's labels, Argo CD's tracking, Helm's
// release metadata, kubectl's last-applied annotation), as its field manager.
// CustomResourceDefinitions and Namespaces go first, and the REST mapping is
// refreshed once the CRDs are established. It returns the objects that could not be
// applied.
func Seed(ctx context.Context, c *kube.Clients, objs []render.Object, opts dryrun.Options) []dryrun.Result {
	opts = opts.WithDefaults()
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
		failed = append(failed, dryrun.Result{Err: &dryrun.Message{Reason: reason.Unavailable, Message: err.Error()}})
	}
	c.Mapper.Reset()
	waitForMappings(ctx, c, slices.DeleteFunc(slices.Clone(first), func(o render.Object) bool {
		return slices.ContainsFunc(failed, func(f dryrun.Result) bool { return f.ID.Key() == o.ID().Key() })
	}))
	return append(failed, seedAll(ctx, c, rest, opts)...)
}

// seedAll seeds objs, at most opts.Concurrency at a time, once the engine planned
// them (identities, namespaces, duplicates; aggregated APIs are not held back: the
// server is drift's own).
func seedAll(ctx context.Context, c *kube.Clients, objs []render.Object, opts dryrun.Options) []dryrun.Result {
	opts.Pending, opts.DryRunAggregated = nil, true
	results := dryrun.Plan(c, objs, opts)
	g := &errgroup.Group{}
	g.SetLimit(opts.Concurrency)
	for i := range results {
		r := &results[i]
		if r.Err != nil {
			continue
		}
		g.Go(func() error {
			res, err := c.ResourceFor(r.ID)
			if err != nil {
				m := dryrun.Message(kube.MappingProblem(r.ID, err))
				r.Err = &m
				return nil
			}
			if err := seedOne(ctx, c, res, r, opts); err != nil {
				m := dryrun.Message(kube.Describe(c, "apply", r.ID, err))
				r.Err = &m
			}
			return nil
		})
	}
	_ = g.Wait()
	var failed []dryrun.Result
	for _, r := range results {
		if r.Err != nil {
			failed = append(failed, r)
		}
	}
	return failed
}

// seedOne writes one planned object as its applier leaves it: created (a client-side
// applier: an Update in managedFields, as its manager), or applied server-side. An
// object already there is applied over.
func seedOne(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *dryrun.Result, opts dryrun.Options) error {
	o, err := dryrun.Sendable(r, opts)
	if err != nil {
		return err
	}
	left, err := opts.Applier.Leaves(o)
	if err != nil {
		return err
	}
	o.Obj = left.Obj
	body, err := serverside.Body(o)
	if err != nil {
		return err
	}
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
	apply := func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return res.Patch(ctx, r.ID.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: opts.FieldManager, Force: &force})
	}
	_, err = kube.Retry(ctx, c, apply)
	// A CRD the server calls established may still be a moment from being served
	// (the server answers 404 for the whole resource, with no kind named, unlike a
	// missing namespace): its custom resources are applied again until it is, for
	// a bounded while.
	for deadline := time.Now().Add(resourceServedTimeout); resourceNotServed(err) && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond)
		_, err = kube.Retry(ctx, c, apply)
	}
	return err
}

// resourceServedTimeout bounds how long an object whose resource the server does
// not serve yet is applied again.
const resourceServedTimeout = 10 * time.Second

// resourceNotServed reports a 404 for the resource itself, not for an object or a
// namespace (whose answers name their kind).
func resourceNotServed(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Kind == ""
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
			crd, err := c.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
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

// waitForMappings waits, for a bounded while (resourceServedTimeout), until the
// server's discovery lists the kind of every CRD among objs (those seeded): an established CRD may
// still be a moment from being listed, and an object of its kind would then fail as
// of a kind the cluster does not serve. A kind still not listed is left for its
// objects to fail on, saying so.
func waitForMappings(ctx context.Context, c *kube.Clients, objs []render.Object) {
	var kinds []schema.GroupKind
	for _, o := range objs {
		if o.ID().GroupKind() != object.CRDKind {
			continue
		}
		u := o.Get()
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		if kind != "" {
			kinds = append(kinds, schema.GroupKind{Group: group, Kind: kind})
		}
	}
	for deadline := time.Now().Add(resourceServedTimeout); len(kinds) > 0 && ctx.Err() == nil; {
		kinds = slices.DeleteFunc(kinds, func(gk schema.GroupKind) bool {
			_, err := c.Mapper.RESTMapping(gk)
			return err == nil
		})
		if len(kinds) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
		c.Mapper.Reset()
	}
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
