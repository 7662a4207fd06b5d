package fields

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func entry(t *testing.T, manager string, paths ...fieldpath.Path) metav1.ManagedFieldsEntry {
	t.Helper()
	e, err := Entry(metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply}, fieldpath.NewSet(paths...))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var (
	labelA = fieldpath.MakePathOrDie("metadata", "labels", "a")
	labelB = fieldpath.MakePathOrDie("metadata", "labels", "b")
	spec   = fieldpath.MakePathOrDie("spec", "replicas")
)

func TestWithoutRemovesPathsAndDropsEntriesLeftEmpty(t *testing.T) {
	t.Parallel()
	mfs := []metav1.ManagedFieldsEntry{entry(t, "one", labelA), entry(t, "two", labelA, spec), entry(t, "three", labelB),
		{Manager: "unreadable", FieldsV1: &metav1.FieldsV1{Raw: []byte("{")}}}
	out, err := Without(mfs, fieldpath.NewSet(labelA))
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, e := range out {
		managers = append(managers, e.Manager)
	}
	if len(out) != 3 || managers[0] != "two" || managers[1] != "three" || managers[2] != "unreadable" {
		t.Fatalf("entries %v", managers)
	}
	if s, _ := Of(out[0]); !s.Equals(fieldpath.NewSet(spec)) {
		t.Errorf("two owns %v, want only spec.replicas", s)
	}
	if string(out[1].FieldsV1.Raw) != string(mfs[2].FieldsV1.Raw) {
		t.Errorf("an entry without the paths was rewritten: %s", out[1].FieldsV1.Raw)
	}
}

func TestOwnedUnitesTheMatchingEntries(t *testing.T) {
	t.Parallel()
	mfs := []metav1.ManagedFieldsEntry{entry(t, "one", labelA), entry(t, "two", spec), entry(t, "one", labelB), {Manager: "one"}}
	got := Owned(mfs, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == "one" })
	if !got.Equals(fieldpath.NewSet(labelA, labelB)) {
		t.Errorf("owned %v", got)
	}
}
