// Package fields is the arithmetic of managedFields, in one place: which fields each
// manager's entry owns, as structured-merge-diff's field sets, read, combined and
// written back.
package fields

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Of is the set of fields entry e owns (empty when it has none).
func Of(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return s, nil
	}
	if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return nil, err
	}
	return s, nil
}

// Owned is the union of the fields of the entries that match; an entry that cannot
// be read owns nothing.
func Owned(mfs []metav1.ManagedFieldsEntry, match func(metav1.ManagedFieldsEntry) bool) *fieldpath.Set {
	set := &fieldpath.Set{}
	for _, e := range mfs {
		if !match(e) {
			continue
		}
		if s, err := Of(e); err == nil {
			set = set.Union(s)
		}
	}
	return set
}

// Entry is e owning set instead of its own fields.
func Entry(e metav1.ManagedFieldsEntry, set *fieldpath.Set) (metav1.ManagedFieldsEntry, error) {
	raw, err := set.ToJSON()
	if err != nil {
		return e, err
	}
	e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	return e, nil
}

// Without removes paths from the entries that own any of them; an entry left owning
// nothing goes, as the API server drops it. Entries that cannot be read are kept as
// they are.
func Without(mfs []metav1.ManagedFieldsEntry, paths *fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(mfs))
	for _, e := range mfs {
		s, err := Of(e)
		if err != nil || s.Intersection(paths).Empty() {
			out = append(out, e)
			continue
		}
		rest := s.Difference(paths)
		if rest.Empty() {
			continue
		}
		if e, err = Entry(e, rest); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
