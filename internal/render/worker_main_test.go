package render_test

import (
	"context"
	"os"
	"testing"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/worker"
)

// TestMain lets the test binary double as a render worker (worker.Pool re-executes
// the running binary, which is this one under go test), and gives the package's
// own tests their pool.
func TestMain(m *testing.M) {
	worker.Serve()
	render.NewTestWorker = func(ctx context.Context, root string, limits render.Limits) render.Worker {
		return worker.New(ctx, root, limits)
	}
	os.Exit(m.Run())
}
