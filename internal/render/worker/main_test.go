package worker

import (
	"os"
	"testing"

	"github.com/drift-gitops/drift/internal/subprocess"
)

// TestMain lets the test binary double as a render worker: Pool re-executes the
// running binary, which is this one under go test.
func TestMain(m *testing.M) {
	if subprocess.Role() == subprocess.RoleRender {
		os.Exit(Main(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
