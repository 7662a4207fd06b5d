package rendercache

import (
	"os"
	"testing"

	"github.com/drift-gitops/drift/internal/render/worker"
)

// TestMain lets the test binary double as a render worker: worker.Pool re-executes
// the running binary, which is this one under go test.
func TestMain(m *testing.M) {
	worker.Serve()
	os.Exit(m.Run())
}
