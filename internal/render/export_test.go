package render

import "io/fs"

// Renderer is a run's render cache (rendercache.Cache), which package render cannot
// import: worker_main_test.go, of the external test package, sets NewTestCache and
// CrossWire.
type Renderer interface {
	Render(commit string, fsys fs.FS, spec Spec) (*Result, error)
}

// NewTestCache makes a render cache that renders in render workers of the
// repository at root (in this process when root is ""), fetching charts with charts
// (nil: none may be fetched).
var NewTestCache func(root string, charts ChartFetcher) Renderer

// CrossWire sends a result across the render wire as a worker sends it
// (worker.EncodeResponse, then worker.DecodeResponse).
var CrossWire func(res *Result) (*Result, error)
