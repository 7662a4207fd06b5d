package kube

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// memoMapper remembers the mappings its REST mapper found, so that asking for an
// object's resource once per stage costs a map lookup; Reset forgets them with the
// mapper's discovery. Misses are not remembered: a CRD created a moment ago is found
// after a Reset.
type memoMapper struct {
	meta.ResettableRESTMapper
	mu       sync.RWMutex
	mappings map[string]*meta.RESTMapping
}

func newMemoMapper(m meta.ResettableRESTMapper) *memoMapper {
	return &memoMapper{ResettableRESTMapper: m, mappings: map[string]*meta.RESTMapping{}}
}

// RESTMapping is the mapper's answer, remembered. Callers must not modify it.
func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := gk.Group + "/" + gk.Kind + "/" + strings.Join(versions, ",")
	m.mu.RLock()
	mapping, ok := m.mappings[key]
	m.mu.RUnlock()
	if ok {
		return mapping, nil
	}
	mapping, err := m.ResettableRESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.mappings[key] = mapping
	m.mu.Unlock()
	return mapping, nil
}

// Reset forgets what discovery found, and the mappings remembered.
func (m *memoMapper) Reset() {
	m.mu.Lock()
	m.mappings = map[string]*meta.RESTMapping{}
	m.mu.Unlock()
	m.ResettableRESTMapper.Reset()
}
