package app

import (
	"os"
	"testing"

	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/subprocess"
)

// TestMain lets the test binary double as a render worker: worker.Pool
// re-executes the running binary, which is this one under go test.
func TestMain(m *testing.M) {
	if subprocess.Role() == subprocess.RoleRender {
		os.Exit(worker.Main(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
