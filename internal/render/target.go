package render

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sync"
)

// Renderers.
const (
	RendererPlain     = "plain"
	RendererKustomize = "kustomize"
	RendererHelm      = "helm"
)

// Spec says what to render and how.
type Spec struct {
	// Path is the repository path of the directory (or, for plain, file) to render.
	Path string
	// Renderer is plain, kustomize or helm; empty detects it from Path.
	Renderer string
	// Helm holds the options of a helm target.
	Helm HelmOptions
}

// Detect picks the renderer for a path: a directory with a kustomization file is
// kustomize, one with Chart.yaml is Helm, anything else is plain.
func Detect(fsys fs.FS, p string) string {
	dir := cleanDir(p)
	if info, err := fs.Stat(fsys, dir); err != nil || !info.IsDir() {
		return RendererPlain
	}
	if findKustomization(fsys, dir) != "" {
		return RendererKustomize
	}
	if info, err := fs.Stat(fsys, joinRepo(dir, "Chart.yaml")); err == nil && !info.IsDir() {
		return RendererHelm
	}
	return RendererPlain
}

// Render renders one target. An error means the target could not be attempted at all
// (its path is missing); what fails while rendering is in the result's Failures.
func Render(fsys fs.FS, spec Spec) (*Result, error) {
	renderer := spec.Renderer
	if renderer == "" {
		renderer = Detect(fsys, spec.Path)
	}
	switch renderer {
	case RendererPlain:
		return Plain(fsys, Options{Paths: []string{spec.Path}})
	case RendererKustomize:
		return Kustomize(fsys, spec.Path), nil
	case RendererHelm:
		return Helm(fsys, spec.Path, spec.Helm), nil
	}
	return nil, fmt.Errorf("unknown renderer %q: use plain, kustomize or helm", spec.Renderer)
}

// Cache renders each (snapshot, spec) once per run, however many targets ask for it,
// and lets targets render in parallel.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	res  *Result
	err  error
}

// Render returns the cached rendering of spec in the snapshot named snapshotKey,
// rendering it on first use. Results are shared: callers must not modify them.
func (c *Cache) Render(snapshotKey string, fsys fs.FS, spec Spec) (*Result, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("render options of %s cannot be encoded: %w", spec.Path, err)
	}
	key := snapshotKey + "\x00" + string(js)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	e, ok := c.entries[key]
	if !ok {
		e = &cacheEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.res, e.err = Render(fsys, spec) })
	return e.res, e.err
}
