package render_test

import (
	"context"
	"os"
	"testing"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/render/worker"
)

// TestMain lets the test binary double as a render worker (worker.Pool re-executes
// the running binary, which is this one under go test), and gives the package's
// own tests their render caches and the wire.
func TestMain(m *testing.M) {
	worker.Serve()
	render.NewTestCache = func(root string, charts render.ChartFetcher) render.Renderer {
		c := &rendercache.Cache{Charts: charts}
		if root != "" {
			c.Worker = worker.New(context.Background(), root, render.DefaultLimits())
		}
		return c
	}
	render.CrossWire = func(res *render.Result) (*render.Result, error) {
		data, err := worker.EncodeResponse(worker.WorkResponse{Result: res})
		if err != nil {
			return nil, err
		}
		resp, err := worker.DecodeResponse(data)
		return resp.Result, err
	}
	os.Exit(m.Run())
}
