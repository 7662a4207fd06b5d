package preview

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

// On a throwaway server nothing but drift writes, so an object a target renders to
// the same bytes on both refs, applied by the same applier, is left as it is by the
// change: it is unchanged without being loaded or sent (dryrun.Result.Same), unless
// what the server makes of it depends on something the change touches. The server
// then gets only the base's version of what the change touches, and the cost of a
// run follows the size of the change.

// alwaysLoaded are kinds other objects' previews depend on the server holding
// (a Pod's PriorityClass and RuntimeClass, the defaults a LimitRange, StorageClass
// or IngressClass gives): loaded and previewed whatever the change touches, as
// Namespaces and CRDs are. So is a Service that names its own cluster IP or node
// ports (namesAllocation): another Service asking for one of them is refused.
var alwaysLoaded = map[schema.GroupKind]bool{
	{Kind: "LimitRange"}: true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:        true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:     true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:  true,
}

// wholeCluster are kinds that make every object of the cluster depend on the others
// (admission policies and webhooks and the objects they read, quotas that count
// objects, aggregated APIs): a cluster whose targets render one has every object
// loaded and previewed.
var wholeCluster = map[schema.GroupKind]bool{
	{Kind: "ResourceQuota"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
}

// controllerKinds are the GitOps controllers' objects: what their controller applied
// is read from them in the server (pruning reads a Kustomization's inventory, an
// Application's resources), and deleting one deletes what it applied (prune's
// cascade), so they are always loaded and previewed, and a change that deletes one
// has every object of the cluster loaded.
var controllerKinds = map[schema.GroupKind]bool{
	{Group: "kustomize.toolkit.fluxcd.io", Kind: "Kustomization"}: true,
	{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}:        true,
	{Group: "argoproj.io", Kind: "Application"}:                   true,
	{Group: "argoproj.io", Kind: "ApplicationSet"}:                true,
	{Group: "fluxcd.controlplane.io", Kind: "ResourceSet"}:        true,
	{Group: "fluxcd.controlplane.io", Kind: "FluxInstance"}:       true,
}

// comparable reports whether the target's objects may be left as they are: the base
// defines it as the head does, renders it whole, and its head renders without
// reading the server (the helm applier's upgrade starts from the release the base
// loads; its lookup reads the server).
func (r *runner) comparable(t *Target) bool {
	return r.base != nil && !r.opts.LoadAll && !t.New && !t.DefinitionChanged && !t.Applier.Traits().UpgradesRelease && !t.Lookup &&
		r.base.CheckPaths([]string{t.basePath(true)}) == nil && r.head.CheckPaths([]string{t.Spec.Path}) == nil
}

// leftAsIs marks, in each comparable target's same, the head's objects the change
// leaves as they are (see above), from the targets' base renders (bases; nil for a
// target the base does not render, or renders in part) and head renders. What keeps
// an object from being the same: its bytes or notes differ, or another target, or
// the same one twice, renders its name; it is a Namespace or CRD (always loaded), of
// an alwaysLoaded kind or a controller's (controllerKinds), an inventory pruning
// reads, or masked (the report must know the values the server makes of it first: a
// Secret's are its rendered ones, which the report learns all the same); its kind's CRD
// or its namespace is added, removed or edited; the cluster holds a wholeCluster kind
// or an object flux-operator fills from another (copyFrom), or the change deletes a
// controller's object.
func (r *runner) leftAsIs(cl *cluster, targets []*Target, bases map[*Target]*render.Result) {
	type name struct{ group, kind, name string }
	owners := map[name]map[*Target]bool{}
	touchedKinds := map[schema.GroupKind]bool{}
	touchedNamespaces := map[string]bool{}
	inventories := map[object.Key]bool{}
	own := func(t *Target, o render.Object) bool {
		id := o.ID()
		n := name{id.Group, id.Kind, id.Name}
		if owners[n] == nil {
			owners[n] = map[*Target]bool{}
		}
		owners[n][t] = true
		return !wholeCluster[id.GroupKind()] && !(o.Mentions(dryrun.CopyFromAnnotation) && o.Get().GetAnnotations()[dryrun.CopyFromAnnotation] != "")
	}
	// touch marks what o, a Namespace or CRD the change adds, removes or edits,
	// holds: its objects depend on it.
	touch := func(o render.Object) {
		switch id := o.ID(); id.GroupKind() {
		case object.NamespaceKind:
			touchedNamespaces[id.Name] = true
		case object.CRDKind:
			u := o.Get()
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			touchedKinds[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	var compared []*Target
	for _, t := range targets {
		base := bases[t]
		var head []render.Object
		if t.Rendered != nil {
			head = t.Rendered.Objects
		}
		for _, objs := range [][]render.Object{head, baseObjects(base)} {
			for _, o := range objs {
				if !own(t, o) {
					return
				}
			}
			invs, _ := inventory.Find(objs)
			for _, inv := range invs {
				inventories[defaulted(inv.Obj.ID(), t.namespaceIn(cl))] = true
			}
		}
		if !r.comparable(t) || base == nil || t.Rendered == nil || len(base.Failures) > 0 || len(t.Rendered.Failures) > 0 {
			// Nothing of it is the same: its Namespaces and CRDs are all touched, and a
			// controller's object of its base that the head may not render may be deleted.
			inHead := byKey(head, t.namespaceIn(cl))
			for _, o := range baseObjects(base) {
				if controllerKinds[o.ID().GroupKind()] && (t.Rendered == nil || inHead[defaulted(o.ID(), t.namespaceIn(cl))] == nil) {
					return
				}
			}
			for _, objs := range [][]render.Object{head, baseObjects(base)} {
				for _, o := range objs {
					if object.IsScaffolding(o.ID().GroupKind()) {
						touch(o)
					}
				}
			}
			continue
		}
		compared = append(compared, t)
		ns := t.namespaceIn(cl)
		inBase := byKey(base.Objects, ns)
		inHead := byKey(head, ns)
		for k, objs := range inHead {
			if b := inBase[k]; len(objs) != 1 || len(b) != 1 || !objs[0].Same(b[0]) {
				touchScaffolding(touch, objs, b)
			}
		}
		for k, objs := range inBase {
			if inHead[k] == nil {
				if controllerKinds[schema.GroupKind{Group: k.Group, Kind: k.Kind}] {
					return // deleting it deletes what it applied (prune's cascade)
				}
				touchScaffolding(touch, objs, nil)
			}
		}
	}
	for _, t := range compared {
		ns := t.namespaceIn(cl)
		inBase := byKey(bases[t].Objects, ns)
		inHead := byKey(t.Rendered.Objects, ns)
		t.same = make([]bool, len(t.Rendered.Objects))
		for i, o := range t.Rendered.Objects {
			id := o.ID()
			k := defaulted(id, ns)
			b := inBase[k]
			gk := id.GroupKind()
			t.same[i] = id.Name != "" && len(inHead[k]) == 1 && len(b) == 1 && o.Same(b[0]) &&
				!object.IsScaffolding(gk) && !alwaysLoaded[gk] && !(gk == serviceKind && namesAllocation(o)) && !controllerKinds[gk] && !inventories[k] &&
				!touchedKinds[gk] && !touchedNamespaces[k.Namespace] &&
				!t.Rules.Masks(id.Group, id.Kind, id.Namespace, id.Name) && !t.Rules.Masks(id.Group, id.Kind, k.Namespace, id.Name) &&
				len(owners[name{id.Group, id.Kind, id.Name}]) == 1
		}
	}
}

var serviceKind = schema.GroupKind{Kind: "Service"}

// namesAllocation reports whether a Service names an address or port the server
// allocates and refuses to give twice: spec.clusterIP or spec.clusterIPs (other than
// "None"), a port's nodePort, spec.healthCheckNodePort. A Service that names none
// gets what the server picks at random, which a throwaway server cannot predict
// for the cluster, so no other object's preview depends on the server holding it.
func namesAllocation(o render.Object) bool {
	if !o.Mentions("clusterIP", "clusterIPs", "nodePort", "healthCheckNodePort") {
		return false
	}
	spec, _ := o.Get().Object["spec"].(map[string]any)
	if ip, _ := spec["clusterIP"].(string); ip != "" && ip != "None" {
		return true
	}
	if ips, _ := spec["clusterIPs"].([]any); len(ips) > 0 {
		for _, ip := range ips {
			if s, _ := ip.(string); s != "" && s != "None" {
				return true
			}
		}
	}
	if hc := spec["healthCheckNodePort"]; hc != nil && hc != int64(0) && hc != float64(0) {
		return true
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		if n := pm["nodePort"]; n != nil && n != int64(0) && n != float64(0) {
			return true
		}
	}
	return false
}

// touchScaffolding touches the Namespaces and CRDs among two versions of an object.
func touchScaffolding(touch func(render.Object), versions ...[]render.Object) {
	for _, objs := range versions {
		for _, o := range objs {
			if object.IsScaffolding(o.ID().GroupKind()) {
				touch(o)
			}
		}
	}
}

// baseObjects are a base render's objects (none without one).
func baseObjects(res *render.Result) []render.Object {
	if res == nil {
		return nil
	}
	return res.Objects
}

// byKey groups objects by their key, the namespace defaulted to ns.
func byKey(objs []render.Object, ns string) map[object.Key][]render.Object {
	out := make(map[object.Key][]render.Object, len(objs))
	for _, o := range objs {
		k := defaulted(o.ID(), ns)
		out[k] = append(out[k], o)
	}
	return out
}

// markSame marks the planned results of the objects the change leaves as they are
// (leftAsIs): they are not sent. It returns how many it marked.
func (t *Target) markSame() int {
	n := 0
	for i := range t.Results {
		if i < len(t.same) && t.same[i] && t.Results[i].Err == nil {
			t.Results[i].Same = true
			n++
		}
	}
	return n
}

// sameKeys are the keys, the namespace defaulted to ns, of the head's objects the
// change leaves as they are (leftAsIs): their base versions are not loaded.
func (t *Target) sameKeys(ns string) map[object.Key]bool {
	out := map[object.Key]bool{}
	for i, same := range t.same {
		if same {
			out[defaulted(t.Rendered.Objects[i].ID(), ns)] = true
		}
	}
	return out
}
