// Package prune finds what applying a change would delete: the objects an inventory in
// the cluster says the applier owns that the repository no longer renders. Ownership
// is never assumed: each candidate must carry its inventory's mark, or it is kept.
package prune

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Options control pruning.
type Options struct {
	// Namespace is the target's default namespace.
	Namespace string
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
	// Propagation is what the delete is sent with (the applier's choice; kubectl
	// prunes with background propagation).
	Propagation metav1.DeletionPropagation
	// ApplySet names an ApplySet parent the repository does not render (kubectl apply
	// --applyset creates it): [RESOURCE][.GROUP]/NAME, in Namespace.
	ApplySet string
	// Controller, when set, is the controller whose record of what it applied is
	// the target's inventory (a Flux Kustomization, an Argo CD Application).
	Controller *Controller
}

// Kept is a candidate that will not be deleted, and why.
type Kept struct {
	ID        object.ID
	Inventory string
	Reason    string
}

// Result is what pruning found for one target.
type Result struct {
	// Deletes are the objects applying the change would delete: Live is set, Merged is
	// nil, Err is set when the server refuses the dry-run delete.
	Deletes []dryrun.Result
	Kept    []Kept
	// Notes say what was looked at (a first apply, an entry already gone).
	Notes []string
	// Failures are inventories that cannot be used (malformed, edited by hand).
	Failures []render.Failure
}

// Find looks for the target's inventories among its rendered objects and returns what
// applying the target would prune. results are the target's dry-run results (their IDs
// carry defaulted namespaces). Nothing is computed when rendering failed: objects
// missing from an incomplete render must never look deleted.
func Find(ctx context.Context, c *kube.Clients, rendered *render.Result, results []dryrun.Result, opts Options) Result {
	var out Result
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = kube.DefaultRequestTimeout
	}
	if opts.Propagation == "" {
		opts.Propagation = metav1.DeletePropagationBackground
	}
	invs, fails := inventory.Find(rendered.Objects)
	out.Failures = append(out.Failures, fails...)
	if opts.ApplySet != "" && !hasFormat(invs, inventory.ApplySet) {
		inv, err := liveApplySetParent(ctx, c, opts)
		switch {
		case err != nil:
			out.Failures = append(out.Failures, render.Failure{Source: "drift.yaml", Reason: reason.Inventory, Message: err.Error()})
		case inv == nil:
			out.Notes = append(out.Notes, fmt.Sprintf("ApplySet %s is not in the cluster yet (a first apply): nothing to prune", opts.ApplySet))
		default:
			invs = append(invs, *inv)
		}
	}
	if len(invs) == 0 && opts.Controller == nil {
		return out
	}
	if len(rendered.Failures) > 0 {
		out.Notes = append(out.Notes, "prune candidates were not looked for: the target has render errors, so objects missing from it might only have failed to render")
		return out
	}
	set := newRenderedSet(results)
	for _, inv := range invs {
		p := &pruner{ctx: ctx, c: c, opts: opts, inv: inv, set: set, out: &out}
		switch inv.Format {
		case inventory.ApplyConfig:
			p.applyConfig()
		case inventory.CLIUtils:
			p.cliUtils()
		case inventory.ApplySet:
			p.applySet()
		}
	}
	if ctrl := opts.Controller; ctrl != nil {
		name := "Kustomization " + ctrl.Owner.Namespace + "/" + ctrl.Owner.Name + " status.inventory"
		if ctrl.Record == applier.ArgoCDResources {
			name = "Application " + cmp.Or(ctrl.Owner.Namespace, argoNamespace) + "/" + ctrl.Owner.Name + " status.resources"
		}
		p := &pruner{ctx: ctx, c: c, opts: opts, inv: inventory.Inventory{Name: name, Obj: render.Object{Source: ctrl.Source}}, set: set, out: &out}
		p.controller(*ctrl)
	}
	// What the deleted controllers delete in turn.
	root := &pruner{ctx: ctx, c: c, opts: opts, set: set, out: &out}
	root.cascade(append([]dryrun.Result(nil), out.Deletes...), 1, map[object.Key]bool{})
	sort.SliceStable(out.Deletes, func(i, j int) bool { return object.Less(out.Deletes[i].ID, out.Deletes[j].ID) })
	sort.SliceStable(out.Kept, func(i, j int) bool { return object.Less(out.Kept[i].ID, out.Kept[j].ID) })
	return out
}

// renderedSet is what the change renders, by group, kind, namespace and name.
type renderedSet struct {
	keys map[object.Key]bool
	// unscoped holds objects whose namespace could not be defaulted (their kind could not
	// be mapped): they match an inventory entry in any namespace.
	unscoped map[object.Key]bool
}

func newRenderedSet(results []dryrun.Result) *renderedSet {
	s := &renderedSet{keys: map[object.Key]bool{}, unscoped: map[object.Key]bool{}}
	for _, r := range results {
		k := r.ID.Key()
		s.keys[k] = true
		if r.ID.Namespace == "" {
			s.unscoped[k] = true
		}
	}
	return s
}

func (s *renderedSet) has(id object.ID) bool {
	if s.keys[id.Key()] {
		return true
	}
	id.Namespace = ""
	return s.unscoped[id.Key()]
}

type pruner struct {
	ctx  context.Context
	c    *kube.Clients
	opts Options
	inv  inventory.Inventory
	set  *renderedSet
	out  *Result
}

func (p *pruner) note(format string, args ...any) {
	p.out.Notes = append(p.out.Notes, fmt.Sprintf("%s: ", p.inv.Name)+fmt.Sprintf(format, args...))
}

func (p *pruner) fail(format string, args ...any) {
	f := render.Failure{Source: p.inv.Obj.Source, Doc: p.inv.Obj.Doc, Reason: reason.Inventory, Message: p.inv.Name + ": " + fmt.Sprintf(format, args...)}
	if p.inv.Obj.Present() { // a controller's record is not a rendered object
		id := p.inv.Obj.ID()
		f.ID = &id
	}
	p.out.Failures = append(p.out.Failures, f)
}

// resource maps a group and kind to its client, in the entry's namespace.
func (p *pruner) resource(gk schema.GroupKind, ns string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := p.c.Mapper.RESTMapping(gk)
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return p.c.Dynamic.Resource(m.Resource).Namespace(ns), m, nil
	}
	return p.c.Dynamic.Resource(m.Resource), m, nil
}

func (p *pruner) get(res dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	obj, err := kube.Retry(p.ctx, p.c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, p.opts.RequestTimeout)
		defer cancel()
		return res.Get(ctx, name, metav1.GetOptions{})
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// liveInventory reads the inventory object as it is in the cluster.
func (p *pruner) liveInventory() (*unstructured.Unstructured, bool) {
	id := p.inv.Obj.ID()
	ns := id.Namespace
	res, m, err := p.resource(id.GroupKind(), ns)
	if err != nil {
		p.fail("its kind cannot be looked up in the cluster: %v", err)
		return nil, false
	}
	if ns == "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns = p.opts.Namespace
		res = p.c.Dynamic.Resource(m.Resource).Namespace(ns)
	}
	live, err := p.get(res, id.Name)
	if err != nil {
		p.fail("the live inventory cannot be read: %v", err)
		return nil, false
	}
	if live == nil {
		p.note("not in the cluster yet (a first apply): nothing to prune")
		return nil, false
	}
	return live, true
}

// candidate examines one object the live inventory lists and the change no longer
// renders: gone already, kept (not owned), or deleted (owned; the delete is dry-run).
func (p *pruner) candidate(id object.ID, owned func(*unstructured.Unstructured) (bool, string)) {
	if p.set.has(id) {
		return
	}
	res, m, err := p.resource(id.GroupKind(), id.Namespace)
	if err != nil {
		p.out.Kept = append(p.out.Kept, Kept{ID: id, Inventory: p.inv.Name, Reason: fmt.Sprintf("its kind %s is not served by the cluster: %v", id.GroupKind(), err)})
		return
	}
	id.Version = m.GroupVersionKind.Version
	live, err := p.get(res, id.Name)
	if err != nil {
		p.out.Deletes = append(p.out.Deletes, dryrun.Result{ID: id, Inventory: p.inv.Name,
			Err: &dryrun.Message{Reason: reason.Error, Message: fmt.Sprintf("listed by %s for deletion, but it cannot be read: %v", p.inv.Name, err)}})
		return
	}
	if live == nil {
		p.note("%s is listed but already gone: nothing to delete", id.Display())
		return
	}
	if ok, why := owned(live); !ok {
		p.out.Kept = append(p.out.Kept, Kept{ID: id, Inventory: p.inv.Name, Reason: why})
		return
	}
	r := dryrun.Result{ID: id, Live: live, Inventory: p.inv.Name, Object: render.Object{Obj: live, Source: p.inv.Obj.Source, Doc: p.inv.Obj.Doc}}
	prop := p.opts.Propagation
	if _, err := kube.Retry(p.ctx, p.c, func(ctx context.Context) (struct{}, error) {
		ctx, cancel := context.WithTimeout(ctx, p.opts.RequestTimeout)
		defer cancel()
		return struct{}{}, res.Delete(ctx, id.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: &prop})
	}); err != nil {
		m := dryrun.Message(kube.Describe(p.c, "delete", id, err))
		r.Err = &m
	} else if id.Group == "apiextensions.k8s.io" && id.Kind == "CustomResourceDefinition" {
		r.CustomResources = p.countCustomResources(live)
	}
	p.out.Deletes = append(p.out.Deletes, r)
}

// countCustomResources counts the custom resources of a CRD, in all namespaces, with
// one LIST of at most one item (the server says how many remain); nil when they
// cannot be listed, negative (-1-n) when the server gives no count beyond n.
func (p *pruner) countCustomResources(crd *unstructured.Unstructured) *int64 {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if storage, _ := m["storage"].(bool); storage {
			version, _ = m["name"].(string)
		}
	}
	if group == "" || plural == "" || version == "" {
		return nil
	}
	res := p.c.Dynamic.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: plural})
	list, err := kube.Retry(p.ctx, p.c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
		ctx, cancel := context.WithTimeout(ctx, p.opts.RequestTimeout)
		defer cancel()
		return res.List(ctx, metav1.ListOptions{Limit: 1})
	})
	if err != nil {
		return nil
	}
	n := int64(len(list.Items))
	switch {
	case list.GetRemainingItemCount() != nil:
		n += *list.GetRemainingItemCount()
	case list.GetContinue() != "":
		n = -1 - n
	}
	return &n
}

func hasFormat(invs []inventory.Inventory, format inventory.Format) bool {
	return slices.ContainsFunc(invs, func(inv inventory.Inventory) bool { return inv.Format == format })
}

// liveApplySetParent reads the parent drift.yaml names, as kubectl's --applyset
// does: RESOURCE[.GROUP]/NAME, or NAME for a Secret. nil when it does not exist yet.
func liveApplySetParent(ctx context.Context, c *kube.Clients, opts Options) (*inventory.Inventory, error) {
	resource, name, ok := strings.Cut(opts.ApplySet, "/")
	if !ok {
		resource, name = "secrets", opts.ApplySet
	}
	gr := schema.ParseGroupResource(resource)
	gvk, err := c.Mapper.KindFor(gr.WithVersion(""))
	if err != nil {
		return nil, fmt.Errorf("applySet %s: the cluster does not serve %s: %v", opts.ApplySet, gr, err)
	}
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("applySet %s: %v", opts.ApplySet, err)
	}
	res := dynamic.ResourceInterface(c.Dynamic.Resource(m.Resource))
	ns := ""
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns = opts.Namespace
		res = c.Dynamic.Resource(m.Resource).Namespace(ns)
	}
	live, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return res.Get(ctx, name, metav1.GetOptions{})
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("applySet %s: the parent cannot be read: %v", opts.ApplySet, err)
	}
	obj := render.Object{Obj: live, Source: "drift.yaml"}
	return &inventory.Inventory{Format: inventory.ApplySet, Obj: obj, Name: "ApplySet " + gvk.Kind + " " + inventory.DisplayName(obj.ID())}, nil
}
