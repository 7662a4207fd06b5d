package applier

import (
	"fmt"
	"slices"
)

// Registry is the appliers a run knows, by name, built once from their constructors
// (internal/applier/appliers.All) and handed to what decides and sends with them.
type Registry struct {
	byName map[Name]Applier
}

// NewRegistry holds appliers. Two of one name, or one whose name ParseName refuses,
// is a bug in the function that lists them: it panics.
func NewRegistry(appliers ...Applier) *Registry {
	r := &Registry{byName: map[Name]Applier{}}
	for _, a := range appliers {
		n := a.Name()
		if _, err := ParseName(string(n)); err != nil {
			panic(fmt.Sprintf("applier registry: %v", err))
		}
		if r.byName[n] != nil {
			panic(fmt.Sprintf("applier registry: %s twice", n))
		}
		r.byName[n] = a
	}
	return r
}

// Get returns the applier of name n; nil when the registry (or a nil one) does not
// hold it.
func (r *Registry) Get(n Name) Applier {
	if r == nil {
		return nil
	}
	return r.byName[n]
}

// All are the appliers, by name.
func (r *Registry) All() []Applier {
	if r == nil {
		return nil
	}
	out := make([]Applier, 0, len(r.byName))
	for _, n := range names {
		if a := r.byName[n]; a != nil {
			out = append(out, a)
		}
	}
	return slices.Clip(out)
}
