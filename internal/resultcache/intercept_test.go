package resultcache

import (
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A webhook's rules and selectors decide which objects are always sent: matched
// loosely (versions and scope are not read), never less than the server matches.
func TestWhatAWebhookMaySeeIsNotCached(t *testing.T) {
	t.Parallel()
	hook := map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "shop"}},
		"objectSelector":    map[string]any{"matchExpressions": []any{map[string]any{"key": "hook", "operator": "Exists"}}},
	}
	r := rulesOf([]any{map[string]any{"apiGroups": []any{"", "apps"}, "resources": []any{"configmaps", "deployments/scale"}, "operations": []any{"UPDATE"}}})[0]
	r.namespaces, r.objects = selector(hook, "namespaceSelector"), selector(hook, "objectSelector")
	all := rulesOf([]any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*/*"}, "operations": []any{"*"}}})[0]
	deleteOnly := rulesOf([]any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "operations": []any{"DELETE"}}})[0]
	cl := &Cluster{nsLabels: map[string]labels.Set{"shop": {"team": "shop"}, "web": {"team": "web"}},
		bypassed: map[string]*atomic.Int64{BypassWebhook: {}}}
	cm, deploy, crd := schema.GroupResource{Resource: "configmaps"}, schema.GroupResource{Group: "apps", Resource: "deployments"}, schema.GroupResource{Group: "example.com", Resource: "widgets"}
	hooked, plain := labels.Set{"hook": "x"}, labels.Set{"app": "web"}
	for _, c := range []struct {
		rules []rule
		gr    schema.GroupResource
		ns    string
		objs  []labels.Set
		want  bool
	}{
		{[]rule{r}, cm, "shop", []labels.Set{hooked}, true},
		{[]rule{r}, cm, "web", []labels.Set{hooked}, false},           // another namespace
		{[]rule{r}, cm, "shop", []labels.Set{plain}, false},           // the object selector
		{[]rule{r}, cm, "shop", []labels.Set{plain, hooked}, true},    // the live object has the label
		{[]rule{r}, deploy, "shop", []labels.Set{hooked}, true},       // a subresource's rule: matched loosely
		{[]rule{r}, crd, "shop", []labels.Set{hooked}, false},         // another group
		{[]rule{all}, crd, "", []labels.Set{plain}, true},             // everything
		{[]rule{deleteOnly}, cm, "shop", []labels.Set{hooked}, false}, // deletes only
	} {
		cl.intercepted = c.rules
		if got := cl.Intercepted(c.gr, c.ns, c.objs...); got != c.want {
			t.Errorf("%v in %q with %v: intercepted %v, want %v", c.gr, c.ns, c.objs, got, c.want)
		}
	}
}
