package appliers

import (
	"testing"

	"github.com/drift-gitops/drift/internal/applier"
)

// TestEveryNameHasItsApplier: the names ParseName accepts and the appliers All builds
// are the same, so a name drift.yaml may give always resolves.
func TestEveryNameHasItsApplier(t *testing.T) {
	t.Parallel()
	reg := All()
	for _, n := range applier.Names() {
		a := reg.Get(n)
		if a == nil || a.Name() != n {
			t.Errorf("%s: %v", n, a)
			continue
		}
		if a.Doc() == "" || a.Sending().Manager == "" {
			t.Errorf("%s: doc %q, manager %q", n, a.Doc(), a.Sending().Manager)
		}
	}
	if got, want := len(reg.All()), len(applier.Names()); got != want {
		t.Errorf("%d appliers, %d names", got, want)
	}
	if reg.Get(applier.Default) == nil {
		t.Errorf("no default applier %s", applier.Default)
	}
}
