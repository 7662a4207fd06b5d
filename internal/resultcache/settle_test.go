package resultcache

import (
	"testing"
	"time"
)

// Answers are not stored while what decides them changed within Settle: told by the
// objects' times, or, for a deletion, which leaves no time behind, by the digest the
// previous run recorded.
func TestAnswersWaitForTheServerToApplyAChange(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	store := Open(cdir(t, t.TempDir()), build, func(string) bool { return false })
	store.Now = func() time.Time { return now }
	run := func(groups map[string]group) *Cluster {
		cl := &Cluster{store: store, scope: Key{Cluster: "https://a uid-1"}, groups: groups, nsUnsettled: map[string]bool{}}
		cl.settle()
		return cl
	}
	old := now.Add(-time.Hour)

	if cl := run(map[string]group{"admission": {"a1", old}, "ns/shop": {"n1", old}}); cl.unsettled || cl.nsUnsettled["shop"] {
		t.Fatal("nothing changed for an hour: unsettled")
	}
	if cl := run(map[string]group{"admission": {"a1", old}, "ns/shop": {"n1", now.Add(-10 * time.Second)}}); cl.unsettled || !cl.nsUnsettled["shop"] {
		t.Errorf("a namespace changed 10s ago: unsettled %v, namespace %v", cl.unsettled, cl.nsUnsettled)
	}
	// A webhook deleted: the digest differs from the recorded one, the times are old.
	if cl := run(map[string]group{"admission": {"a2", old}, "ns/shop": {"n1", old}}); !cl.unsettled {
		t.Error("the admission configuration changed since the last run: settled")
	}
	now = now.Add(30 * time.Second)
	if cl := run(map[string]group{"admission": {"a2", old}, "ns/shop": {"n1", old}}); !cl.unsettled {
		t.Error("30s after the change was seen: settled")
	}
	now = now.Add(time.Minute)
	if cl := run(map[string]group{"admission": {"a2", old}, "ns/shop": {"n1", old}}); cl.unsettled {
		t.Error("a minute and a half after the change was seen: unsettled")
	}
	// A cluster without a record: its objects' times alone.
	store2 := Open(cdir(t, t.TempDir()), build, func(string) bool { return false })
	store2.Now = store.Now
	cl := &Cluster{store: store2, scope: Key{Cluster: "https://b uid-2"}, groups: map[string]group{"crds": {"c1", now.Add(-5 * time.Second)}}, nsUnsettled: map[string]bool{}}
	cl.settle()
	if !cl.unsettled {
		t.Error("a CRD changed 5s ago on a new cluster: settled")
	}
}
