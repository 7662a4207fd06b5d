package resultcache

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An answer that is the live object, field for field (an apply that changes
// nothing), is kept as a flag, no value of the object written, and comes back as a
// copy of the live object the next run reads; an answer that differs from the live
// object is kept whole. Either way the next run's answer is the one the server gave.
func TestAnAnswerThatIsTheLiveObjectIsKeptAsAFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live := func() *unstructured.Unstructured {
		o := obj(map[string]any{"note": "only-in-the-live-object", "n": int64(3)})
		o.SetUID("u1")
		o.SetResourceVersion("41")
		o.SetManagedFields(nil)
		return o
	}
	changed := live()
	changed.Object["data"].(map[string]any)["note"] = "changed-by-the-apply"
	cluster := func(s *Store) *Cluster {
		return &Cluster{store: s, scope: Key{Cluster: "https://a uid-1"}, nsUnsettled: map[string]bool{}, namespaces: map[string]string{"shop": "uid-s rv-1"}}
	}
	req := func(body string) Request {
		return Request{Resource: schema.GroupResource{Resource: "configmaps"}, Namespace: "shop", Applier: "kubectl-server-side",
			Manager: "kubectl", Method: "apply", Live: live(), Body: []byte(body)}
	}
	run(t, dir, func(s *Store) {
		cl := cluster(s)
		// Held until the run knows every value to hide, as a run's first answers are.
		s.Hold()
		cl.Put(req(`{"unchanged":1}`), Answer{Merged: live(), Warnings: []string{"deprecated"}})
		s.Release()
		cl.Put(req(`{"changed":1}`), Answer{Merged: changed})
	})
	pack := string(mustRead(t, files(t, dir)[0]))
	if strings.Contains(pack, "only-in-the-live-object") {
		t.Error("the pack holds a value of an answer that is the live object")
	}
	if !strings.Contains(pack, "changed-by-the-apply") {
		t.Error("the pack lacks the answer that differs from the live object")
	}
	run(t, dir, func(s *Store) {
		cl := cluster(s)
		r := req(`{"unchanged":1}`)
		got, ok := cl.Get(r)
		if !ok || !reflect.DeepEqual(got.Merged.Object, live().Object) || !reflect.DeepEqual(got.Warnings, []string{"deprecated"}) {
			t.Fatalf("got %v %+v, want the live object and the warning", ok, got)
		}
		if got.Merged == r.Live {
			t.Error("the answer is the live object itself, not a copy")
		}
		if got, ok := cl.Get(req(`{"changed":1}`)); !ok || !reflect.DeepEqual(got.Merged.Object, changed.Object) {
			t.Errorf("got %v %+v, want the changed answer", ok, got)
		}
	})
}
