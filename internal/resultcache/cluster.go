package resultcache

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
)

// Cluster is the store as one cluster's run reads it: what decides every answer of
// the cluster (who it is, who asks, what they may do, its version, its admission
// configuration, its CRDs and namespaces), read once at the start of the run.
type Cluster struct {
	store *Store
	// scope holds the key's cluster-wide fields.
	scope Key
	// crds are the resourceVersions of the CRDs, by the resources they define.
	crds map[schema.GroupResource]string
	// namespaces digest each namespace with its quotas and limit ranges; nsLabels
	// are each namespace's labels, for the rules' namespace selectors.
	namespaces map[string]string
	nsLabels   map[string]labels.Set
	// intercepted are the admission rules whose answers depend on what drift cannot
	// see (a webhook; a policy with parameters): objects they match are always sent.
	intercepted []rule

	// groups are the digests of what decides answers (admission, access, crds and
	// each namespace, "ns/NAME"), with the time each last changed as far as the
	// objects' own times tell (nil: never, or only at creation for a namespace).
	groups   map[string]group
	groupsMu sync.Mutex
	// unsettled says that the admission configuration, RBAC or the CRDs changed
	// within the store's Settle, and nsUnsettled which namespaces did: the server may
	// not answer by them yet, so answers are not stored.
	unsettled   bool
	nsUnsettled map[string]bool

	// Hits counts the answers taken from the store, Sent the requests sent that
	// could have been, Bypassed the objects that cannot be (by reason).
	Hits, Sent atomic.Int64
	bypassed   map[string]*atomic.Int64
}

// uncached are the built-in kinds an admission plugin decides from other objects
// than the namespace's (LimitRanger, default storage and ingress classes, service
// accounts, Pod Security, node selectors): never cached.
var uncached = map[schema.GroupResource]string{
	{Resource: "pods"}:                                  "Pods are admitted from objects drift does not key on",
	{Resource: "persistentvolumeclaims"}:                "PersistentVolumeClaims take the cluster's default StorageClass",
	{Group: "networking.k8s.io", Resource: "ingresses"}: "Ingresses take the cluster's default IngressClass",
}

// Bypass reasons counted by Bypassed.
const (
	BypassWebhook   = "a webhook or a policy with parameters intercepts it"
	BypassNamespace = "its namespace was not there when the run began"
	BypassKind      = "its kind is admitted from other objects"
)

// ForCluster reads what decides the answers of the cluster c connects to, its reads
// side by side. An error means the cache cannot be used for the cluster (a read
// refused): the caller sends every object and says why.
func ForCluster(ctx context.Context, c *kube.Clients, store *Store) (*Cluster, error) {
	cl := &Cluster{store: store, crds: map[schema.GroupResource]string{}, namespaces: map[string]string{}, nsLabels: map[string]labels.Set{},
		groups: map[string]group{}, nsUnsettled: map[string]bool{},
		bypassed: map[string]*atomic.Int64{BypassWebhook: {}, BypassNamespace: {}, BypassKind: {}}}
	lister := &lister{ctx: ctx, c: c}
	get := func(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
		return kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			return c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		})
	}
	var access string
	var accessChanged time.Time
	var ks *unstructured.Unstructured
	g := &errgroup.Group{}
	g.Go(func() (err error) {
		cl.scope.ServerVersion, _, err = c.Capabilities()
		return err
	})
	g.Go(func() (err error) {
		if ks, err = get(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "kube-system"); err != nil {
			return fmt.Errorf("reading the cluster's identity (namespace kube-system): %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		cl.scope.User, err = whoAmI(ctx, c)
		return err
	})
	g.Go(func() (err error) {
		access, accessChanged, err = lister.digest(
			schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
			schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
			schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
			schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
		)
		return err
	})
	g.Go(func() error { return cl.readAdmission(lister) })
	g.Go(func() error { return cl.readCRDs(lister) })
	g.Go(func() error { return cl.readNamespaces(lister) })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	cl.scope.Cluster = c.Config.Host + " " + string(ks.GetUID())
	cl.scope.Access = access
	cl.setGroup("access", group{Digest: access, Changed: accessChanged})
	cl.settle()
	return cl, nil
}

// whoAmI is the user the server authenticates the connection as, with its groups
// and extra (a SelfSubjectReview, as kubectl auth whoami asks).
func whoAmI(ctx context.Context, c *kube.Clients) (string, error) {
	gvr := schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}
	review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}}
	out, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return c.Dynamic.Resource(gvr).Create(ctx, review, metav1.CreateOptions{})
	})
	if err != nil {
		return "", fmt.Errorf("asking the server who drift is (SelfSubjectReview): %w", err)
	}
	info, _, _ := unstructured.NestedMap(out.Object, "status", "userInfo")
	if len(info) == 0 {
		return "", fmt.Errorf("the server's SelfSubjectReview names no user")
	}
	return digest(info), nil
}

// lister reads lists of one cluster.
type lister struct {
	ctx context.Context
	c   *kube.Clients
}

// served reports whether the cluster serves the resource.
func (l *lister) served(gvr schema.GroupVersionResource) bool {
	_, err := l.c.Mapper.KindFor(gvr)
	return err == nil
}

// list is every object of a resource, whole, page by page.
func (l *lister) list(gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := kube.Retry(l.ctx, l.c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
			return l.c.Dynamic.Resource(gvr).List(ctx, opts)
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		out = append(out, page.Items...)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// metadata is every object of a resource, metadata only, page by page.
func (l *lister) metadata(gvr schema.GroupVersionResource) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := l.c.ListMetadata(l.ctx, gvr, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		out = append(out, page.Items...)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// digest digests the names and resourceVersions of every object of the resources
// (those the cluster serves), and says when the newest of them last changed.
func (l *lister) digest(gvrs ...schema.GroupVersionResource) (string, time.Time, error) {
	var lines []string
	var changed time.Time
	lists, err := inParallel(len(gvrs), func(i int) ([]metav1.PartialObjectMetadata, error) {
		if !l.served(gvrs[i]) {
			return nil, nil
		}
		return l.metadata(gvrs[i])
	})
	if err != nil {
		return "", time.Time{}, err
	}
	for i, items := range lists {
		for _, it := range items {
			lines = append(lines, gvrs[i].Resource+" "+it.Namespace+"/"+it.Name+" "+string(it.UID)+" "+it.ResourceVersion)
			changed = later(changed, lastChange(&it, false))
		}
	}
	sort.Strings(lines)
	return digest(lines), changed, nil
}

// lastChange is when obj was last written, from its creation and its managedFields'
// times; afterCreation leaves out what was written when it was created.
func lastChange(obj metav1.Object, afterCreation bool) time.Time {
	created := obj.GetCreationTimestamp().Time
	t := created
	if afterCreation {
		t = time.Time{}
	}
	for _, mf := range obj.GetManagedFields() {
		if mf.Time != nil && (!afterCreation || mf.Time.After(created)) {
			t = later(t, mf.Time.Time)
		}
	}
	return t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// admission are the admission configurations that may change an answer.
var admission = []struct {
	gvr schema.GroupVersionResource
	// webhooks: rules under webhooks[]; policy: under spec.matchConstraints, and
	// intercepting only with spec.paramKind.
	webhooks bool
}{
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}, true},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}, true},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1beta1", Resource: "mutatingadmissionpolicies"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1beta1", Resource: "mutatingadmissionpolicybindings"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1alpha1", Resource: "mutatingadmissionpolicies"}, false},
	{schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1alpha1", Resource: "mutatingadmissionpolicybindings"}, false},
}

// readAdmission digests every webhook configuration and admission policy, and keeps
// the rules of those whose answers drift cannot key on.
func (cl *Cluster) readAdmission(l *lister) error {
	var lines []string
	var changed time.Time
	lists, err := inParallel(len(admission), func(i int) ([]unstructured.Unstructured, error) {
		if !l.served(admission[i].gvr) {
			return nil, nil
		}
		return l.list(admission[i].gvr)
	})
	if err != nil {
		return err
	}
	for i, items := range lists {
		a := admission[i]
		for _, it := range items {
			lines = append(lines, a.gvr.String()+" "+it.GetName()+" "+string(it.GetUID())+" "+it.GetResourceVersion())
			changed = later(changed, lastChange(&it, false))
			if a.webhooks {
				hooks, _, _ := unstructured.NestedSlice(it.Object, "webhooks")
				for _, h := range hooks {
					hm, _ := h.(map[string]any)
					rules, _, _ := unstructured.NestedSlice(hm, "rules")
					nsSel, objSel := selector(hm, "namespaceSelector"), selector(hm, "objectSelector")
					for _, r := range rulesOf(rules) {
						r.namespaces, r.objects = nsSel, objSel
						cl.intercepted = append(cl.intercepted, r)
					}
				}
				continue
			}
			if pk, ok, _ := unstructured.NestedMap(it.Object, "spec", "paramKind"); ok && len(pk) > 0 {
				rules, _, _ := unstructured.NestedSlice(it.Object, "spec", "matchConstraints", "resourceRules")
				if len(rules) == 0 {
					rules = []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "operations": []any{"*"}}}
				}
				cl.intercepted = append(cl.intercepted, rulesOf(rules)...)
			}
		}
	}
	sort.Strings(lines)
	cl.scope.Admission = digest(lines)
	cl.setGroup("admission", group{Digest: cl.scope.Admission, Changed: changed})
	return nil
}

// readCRDs keeps each CRD's resourceVersion by the resource it defines (a CRD's name
// is its plural and its group, which the server checks), from the CRDs' metadata.
func (cl *Cluster) readCRDs(l *lister) error {
	items, err := l.c.CRDs(l.ctx)
	if err != nil {
		return err
	}
	var lines []string
	var changed time.Time
	for _, it := range items {
		plural, group, _ := strings.Cut(it.GetName(), ".")
		v := string(it.GetUID()) + " " + it.GetResourceVersion()
		cl.crds[schema.GroupResource{Group: group, Resource: plural}] = v
		lines = append(lines, it.GetName()+" "+v)
		changed = later(changed, lastChange(&it, false))
	}
	sort.Strings(lines)
	cl.setGroup("crds", group{Digest: digest(lines), Changed: changed})
	return nil
}

// readNamespaces digests each namespace with its ResourceQuotas and LimitRanges.
func (cl *Cluster) readNamespaces(l *lister) error {
	v1 := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Version: "v1", Resource: r}
	}
	resources := []string{"namespaces", "resourcequotas", "limitranges"}
	lists, err := inParallel(len(resources), func(i int) ([]metav1.PartialObjectMetadata, error) {
		return l.metadata(v1(resources[i]))
	})
	if err != nil {
		return err
	}
	nss := lists[0]
	lines := map[string][]string{}
	changed := map[string]time.Time{}
	for _, ns := range nss {
		lines[ns.Name] = []string{"namespace " + string(ns.UID) + " " + ns.ResourceVersion}
		cl.nsLabels[ns.Name] = labels.Set(ns.Labels)
		// A namespace's labels set when it was created are read by admission from the
		// server itself when its informer has not seen the namespace yet.
		changed[ns.Name] = lastChange(&ns, true)
	}
	for k, items := range lists[1:] {
		r := resources[k+1]
		for _, it := range items {
			if _, ok := lines[it.Namespace]; ok {
				lines[it.Namespace] = append(lines[it.Namespace], r+" "+it.Name+" "+string(it.UID)+" "+it.ResourceVersion)
				changed[it.Namespace] = later(changed[it.Namespace], lastChange(&it, false))
			}
		}
	}
	for ns, l := range lines {
		sort.Strings(l)
		cl.namespaces[ns] = digest(l)
		cl.setGroup("ns/"+ns, group{Digest: cl.namespaces[ns], Changed: changed[ns]})
	}
	return nil
}

// setGroup records one part of what decides answers (ForCluster reads them side by
// side).
func (cl *Cluster) setGroup(name string, g group) {
	cl.groupsMu.Lock()
	defer cl.groupsMu.Unlock()
	cl.groups[name] = g
}

// inParallel runs fetch for 0..n-1 side by side and returns the results in order, or
// the first error.
func inParallel[T any](n int, fetch func(i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	g := &errgroup.Group{}
	for i := range n {
		g.Go(func() (err error) {
			out[i], err = fetch(i)
			return err
		})
	}
	return out, g.Wait()
}

// group is one part of what decides answers as the record of a cluster keeps it: its
// digest, and since when the server may answer by it.
type group struct {
	Digest  string    `json:"digest"`
	Changed time.Time `json:"changed"`
}

// settle decides whether answers may be stored: not while a part of what decides
// them changed within the store's Settle, since the API server applies a new
// admission configuration, RBAC or CRD a moment after it stores it. When a part
// changed is told by the objects' own times, or, for what the times cannot tell
// (a deletion), by the digest the previous run of the cluster recorded differing:
// then it changed now. The record is written back for the next run.
func (cl *Cluster) settle() {
	now := cl.store.Now()
	prev := cl.store.readRecord(cl.scope.Cluster)
	for name, g := range cl.groups {
		if p, ok := prev[name]; ok {
			if p.Digest == g.Digest {
				g.Changed = later(g.Changed, p.Changed)
			} else {
				g.Changed = now
			}
			cl.groups[name] = g
		}
		if now.Sub(g.Changed) < cl.store.Settle {
			if ns, ok := strings.CutPrefix(name, "ns/"); ok {
				cl.nsUnsettled[ns] = true
			} else {
				cl.unsettled = true
			}
		}
	}
	cl.store.writeRecord(cl.scope.Cluster, cl.groups)
}

// rule is one admission rule, as far as drift matches it: API groups, resources and
// operations, and a webhook's namespace and object selectors (versions and scope are
// not read, so a rule matches more rather than less).
type rule struct {
	groups, resources, operations []string
	// namespaces and objects select what the rule applies to (nil: everything).
	namespaces, objects labels.Selector
}

// selector is the label selector at m[key]; nil when there is none, and one that
// selects everything when it cannot be read (so the rule matches more).
func selector(m map[string]any, key string) labels.Selector {
	raw, ok := m[key].(map[string]any)
	if !ok {
		return nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return labels.Everything()
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return labels.Everything()
	}
	return sel
}

func rulesOf(rules []any) []rule {
	var out []rule
	for _, r := range rules {
		m, _ := r.(map[string]any)
		strs := func(k string) []string {
			v, _, _ := unstructured.NestedStringSlice(m, k)
			return v
		}
		out = append(out, rule{groups: strs("apiGroups"), resources: strs("resources"), operations: strs("operations")})
	}
	return out
}

// matches reports whether the rule may intercept a create or an update of gr.
func (r rule) matches(gr schema.GroupResource) bool {
	anyOf := func(list []string, ok func(string) bool) bool {
		for _, v := range list {
			if ok(v) {
				return true
			}
		}
		return false
	}
	return anyOf(r.groups, func(g string) bool { return g == "*" || g == gr.Group }) &&
		anyOf(r.resources, func(res string) bool {
			main, _, _ := strings.Cut(res, "/")
			return main == "*" || main == gr.Resource
		}) &&
		anyOf(r.operations, func(op string) bool { return op == "*" || op == "CREATE" || op == "UPDATE" })
}

// Request is one dry-run request of an object, as a key is made of it.
type Request struct {
	Resource  schema.GroupResource
	Namespace string
	// Applier, Manager and Force are how the object is applied; Method the request
	// (apply, create, patch and its type, update) with its field validation.
	Applier, Manager, Method string
	Force                    bool
	// Live is the live object read (nil: absent).
	Live *unstructured.Unstructured
	// Body is what the request carries.
	Body []byte
}

// Cacheable says why requests for gr in namespace ns cannot be cached ("": they can),
// and counts it.
func (cl *Cluster) Cacheable(gr schema.GroupResource, ns string) string {
	why := ""
	switch {
	case uncached[gr] != "":
		why = BypassKind
	case ns != "" && cl.namespaces[ns] == "":
		why = BypassNamespace
	}
	if why != "" {
		cl.bypassed[why].Add(1)
	}
	return why
}

// Intercepted reports whether a rule whose answers drift cannot key on (a webhook, a
// policy with parameters) may see a create or update of gr in namespace ns whose
// object has one of the label sets (the object sent, the live one, both merged), and
// counts it. A namespace is matched on its own labels.
func (cl *Cluster) Intercepted(gr schema.GroupResource, ns string, objLabels ...labels.Set) bool {
	nsLabels, namespaced := cl.nsLabels[ns], ns != ""
	if gr == (schema.GroupResource{Resource: "namespaces"}) && len(objLabels) > 0 {
		nsLabels, namespaced = objLabels[0], true
	}
	for _, r := range cl.intercepted {
		if !r.matches(gr) {
			continue
		}
		if r.namespaces != nil && namespaced && !r.namespaces.Matches(nsLabels) {
			continue
		}
		if r.objects != nil && !slices.ContainsFunc(objLabels, func(l labels.Set) bool { return r.objects.Matches(l) }) {
			continue
		}
		cl.bypassed[BypassWebhook].Add(1)
		return true
	}
	return false
}

// Bypassed counts the objects not cached, by reason.
func (cl *Cluster) Bypassed() map[string]int64 {
	out := map[string]int64{}
	for why, n := range cl.bypassed {
		if v := n.Load(); v > 0 {
			out[why] = v
		}
	}
	return out
}

// key is the request's key.
func (cl *Cluster) key(r Request) Key {
	k := cl.scope
	k.Applier, k.Manager, k.Method, k.Force = r.Applier, r.Manager, r.Method, r.Force
	if r.Live != nil {
		k.LiveUID, k.LiveResourceVersion = string(r.Live.GetUID()), r.Live.GetResourceVersion()
	}
	k.CRD = cl.crds[r.Resource]
	if r.Namespace != "" {
		k.Namespace = r.Namespace + " " + cl.namespaces[r.Namespace]
	}
	k.Sent = r.Body
	return k
}

// secrets is the resource whose data is secret, every value of it.
var secrets = schema.GroupResource{Resource: "secrets"}

// sourcesOf are what an answer to r may take its secret strings from: what r carried
// (its body, decoded when asked) and its live object, and for a Secret the base64 of
// its stringData's values, which the server answers in data.
func sourcesOf(r Request) Sources {
	return func() []any { return sourcesWith(r, r.Live) }
}

// snapshotOf is sourcesOf with the live object as it is now, for an answer Put while
// the store holds: the caller goes on with the live object (and trims it).
func snapshotOf(r Request) Sources {
	var live []byte
	if r.Live != nil {
		live, _ = json.Marshal(r.Live.Object)
	}
	return func() []any {
		var l any
		if live != nil {
			_ = json.Unmarshal(live, &l)
		}
		return sourcesWith(r, l)
	}
}

func sourcesWith(r Request, live any) []any {
	var sent any
	_ = json.Unmarshal(r.Body, &sent) // a body that is not JSON holds no string
	out := []any{sent, live}
	m, _ := sent.(map[string]any)
	sd, _ := m["stringData"].(map[string]any)
	for _, v := range sd {
		if str, ok := v.(string); ok && r.Resource == secrets {
			out = append(out, base64.StdEncoding.EncodeToString([]byte(str)))
		}
	}
	return out
}

// Get is the stored answer to r.
func (cl *Cluster) Get(r Request) (Answer, bool) {
	a, ok := cl.store.Get(cl.key(r), sourcesOf(r))
	if ok && a.SameAsLive {
		// The key names the live object by uid and resourceVersion: the one read
		// now is the one the answer was.
		if r.Live == nil {
			ok = false
		} else {
			a.Merged = r.Live.DeepCopy()
		}
	}
	if ok {
		cl.Hits.Add(1)
	} else {
		cl.Sent.Add(1)
	}
	return a, ok
}

// Put stores the answer to r, unless what decides it changed too recently for the
// server to have answered by it (settle).
func (cl *Cluster) Put(r Request, a Answer) {
	if cl.unsettled || cl.nsUnsettled[r.Namespace] {
		return
	}
	a.SecretData = r.Resource == secrets
	if r.Live != nil && object.JSONEqual(r.Live.Object, a.Merged.Object) {
		// Kept as a flag (Get copies the live object): no string of it to hide, so
		// no source to restore one from.
		a.SameAsLive = true
		cl.store.Put(cl.key(r), a, Of())
		return
	}
	sources := sourcesOf(r)
	if cl.store.holds() {
		sources = snapshotOf(r)
	}
	cl.store.Put(cl.key(r), a, sources)
}

// digest is the hash of v's JSON-like rendering (fmt's %v of sorted data).
func digest(v any) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%#v", v)))
	return hex.EncodeToString(sum[:])
}
