package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the lookups that reach it.
type countingMapper struct {
	meta.ResettableRESTMapper
	asked, resets int
	known         bool
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	if !c.known {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: gk.Group, Version: versions[0], Resource: "widgets"}}, nil
}

func (c *countingMapper) Reset() { c.resets++ }

// TestMappingsAreRememberedUntilReset: a mapping found is asked once; a miss is asked
// again (the CRD may come), and Reset forgets what was found.
func TestMappingsAreRememberedUntilReset(t *testing.T) {
	inner := &countingMapper{}
	m := newMemoMapper(inner)
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	for range 2 {
		if _, err := m.RESTMapping(gk, "v1"); !meta.IsNoMatchError(err) {
			t.Fatalf("got %v, want no match", err)
		}
	}
	inner.known = true
	for range 3 {
		if mp, err := m.RESTMapping(gk, "v1"); err != nil || mp.Resource.Resource != "widgets" {
			t.Fatalf("got %v %v", mp, err)
		}
	}
	if _, err := m.RESTMapping(gk, "v2"); err != nil {
		t.Fatal(err)
	}
	if inner.asked != 4 {
		t.Errorf("asked %d times, want 4 (two misses, v1 once, v2 once)", inner.asked)
	}
	m.Reset()
	_, _ = m.RESTMapping(gk, "v1")
	if inner.asked != 5 || inner.resets != 1 {
		t.Errorf("after Reset: asked %d, resets %d", inner.asked, inner.resets)
	}
}
