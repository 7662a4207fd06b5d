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

// Render renders one target in this process, with the default limits on output and
// objects; the limits on memory, stack and time need a worker (Isolated). An error
// means the target could not be attempted at all (its path is missing); what fails
// while rendering is in the result's Failures.
func Render(fsys fs.FS, spec Spec) (*Result, error) {
	return renderWith(fsys, spec, DefaultLimits())
}

func renderWith(fsys fs.FS, spec Spec, limits Limits) (*Result, error) {
	if spec.Renderer == "" {
		spec.Renderer = Detect(fsys, spec.Path)
	}
	var res *Result
	var err error
	switch spec.Renderer {
	case RendererPlain:
		res, err = Plain(fsys, Options{Paths: []string{spec.Path}})
	case RendererKustomize:
		res = Kustomize(fsys, spec.Path)
	case RendererHelm:
		res = helm(fsys, spec.Path, spec.Helm, limits)
	default:
		return nil, fmt.Errorf("unknown renderer %q: use plain, kustomize or helm", spec.Renderer)
	}
	capObjects(res, spec, limits.Objects)
	return res, err
}

// Cache renders each (snapshot, spec) once per run, however many targets ask for it,
// and lets targets render in parallel.
type Cache struct {
	// Isolated, when set, renders in render workers under its limits; otherwise
	// rendering runs in this process (package tests).
	Isolated *Isolated

	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	res  *Result
	err  error
}

// Render returns the cached rendering of spec in the snapshot of commit ("" for the
// work tree), whose files are fsys, rendering it on first use. Results are shared:
// callers must not modify them.
func (c *Cache) Render(commit string, fsys fs.FS, spec Spec) (*Result, error) {
	if spec.Renderer == "" {
		spec.Renderer = Detect(fsys, spec.Path)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("render options of %s cannot be encoded: %w", spec.Path, err)
	}
	key := commit + "\x00" + string(js)
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
	e.once.Do(func() {
		if c.Isolated != nil {
			e.res, e.err = c.Isolated.Render(commit, spec)
			return
		}
		e.res, e.err = Render(fsys, spec)
	})
	return e.res, e.err
}
