package render

import "context"

// NewTestWorker makes the pool of render workers this package's tests render with:
// render/worker.New, which package render cannot import, so worker_main_test.go (of
// the external test package) sets it.
var NewTestWorker func(ctx context.Context, root string, limits Limits) Worker
