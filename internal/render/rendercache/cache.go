// Package rendercache is a run's rendering: each (snapshot, spec) rendered once
// however many targets ask for it, in render workers (Worker, internal/render/worker's
// Pool) or in this process; the charts a spec needs fetched first in drift's own
// process; a rendering of one ref taken by the other where the change touches none
// of its inputs (Equivalent); renderings kept between runs (Store); and the read-only
// proxy through which a worker's Helm lookup reads a cluster (lookup.go).
package rendercache

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/worker"
	"github.com/drift-gitops/drift/internal/source"
)

// Worker renders specs out of drift's process, each in a render worker under the
// run's limits: internal/render/worker's Pool.
type Worker interface {
	// Render renders spec in the snapshot of commit ("" for the work tree) on its
	// own, its Helm lookup reading the cluster through lookup.
	Render(commit string, spec render.Spec, lookup *worker.LookupEndpoint) (*render.Result, error)
	// Queue renders spec in the snapshot of commit in a batch with the other specs
	// waiting.
	Queue(commit string, spec render.Spec) (*render.Result, error)
	// Expand expands an ApplicationSet; what names it in messages. A worker that
	// gave no answer is a *worker.Failure.
	Expand(commit string, req appset.Request, what string) (*appset.Result, error)
	// Context is the run's, which ends the workers.
	Context() context.Context
	// Close ends the workers.
	Close()
}

// Cache renders each (snapshot, spec) once per run, however many targets ask for it,
// and lets targets render in parallel.
type Cache struct {
	// Worker, when set, renders in render workers under its limits
	// (internal/render/worker); otherwise rendering runs in this process (package
	// tests).
	Worker Worker

	// Charts fetches the charts of chart repositories and registries (nil: none may
	// be fetched).
	Charts render.ChartFetcher

	// Secrets says what `lookup` hands templates of the clusters' Secrets.
	Secrets SecretLookup

	// RenderBoth turns Equivalent off: every spec is rendered in every snapshot.
	RenderBoth bool

	// Store keeps renderings between runs (nil: none), and InputID says what of a
	// repository path counts at a commit, as a rendering read it (ok false: it
	// cannot vouch for it, as for a path reached through a symbolic link, or the
	// work tree; source.Snapshot.InputID). A kept rendering of a spec is taken where
	// every path it read is what it was when it was made, whatever the commit (a
	// clone too shallow to hold that commit takes it as well). Only renderings of
	// commits are kept, never one that reads a cluster (Helm's lookup), with their
	// Secrets' values sealed (secrets.go), and only when Save is told the rest holds
	// no secret.
	Store   Store
	InputID func(commit, path string, read source.Read) (id string, ok bool)

	mu      sync.Mutex
	entries map[string]*cacheEntry
	lookups map[string]*lookupCluster
	// twins are the snapshots Equivalent relates, by commit; reused counts the
	// renders they spared.
	twins  map[string][]twin
	reused int
	// kept are the renderings of the run Save may keep, by spec, as records; stored
	// counts the renderings taken from Store; saved says Save was called, after
	// which nothing more is kept.
	kept   map[string]keptRender
	stored int
	saved  bool
	// made counts the renderings made by this run.
	made int
}

// AllowLookup lets Helm targets whose HelmOptions.Lookup is cluster read that
// cluster's objects with cfg through `lookup` (the helm applier). A render
// worker never gets cfg: it reads through a read-only proxy drift serves on loopback
// (GET only) for the run. Call it before rendering; the first call for a cluster
// wins.
func (c *Cache) AllowLookup(cluster string, cfg *rest.Config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lookups == nil {
		c.lookups = map[string]*lookupCluster{}
	}
	if c.lookups[cluster] == nil {
		c.lookups[cluster] = &lookupCluster{cfg: cfg, secrets: c.Secrets}
	}
}

// Expand expands an ApplicationSet of the snapshot of commit ("" for the work tree),
// whose files are fsys, in a render worker under the run's limits (in this process
// without Worker, for package tests); what names it in messages. A worker that
// gave no answer is a *worker.Failure.
func (c *Cache) Expand(commit string, fsys fs.FS, req appset.Request, what string) (*appset.Result, error) {
	if c.Worker != nil {
		return c.Worker.Expand(commit, req, what)
	}
	return appset.Generate(context.Background(), fsys, req)
}

// LookupHidSecrets reports whether `lookup` handed a template of the cluster any
// Secret without its data (SecretLookup.Reveal unset).
func (c *Cache) LookupHidSecrets(cluster string) bool {
	c.mu.Lock()
	l := c.lookups[cluster]
	c.mu.Unlock()
	return l != nil && l.hidden.Load() > 0
}

type cacheEntry struct {
	once sync.Once
	res  *render.Result
	err  error
	// done is closed once res and err are set; checking says the entry is looking
	// for a twin's result (fromTwin), with the cache's lock held to read or set it.
	done     chan struct{}
	checking bool
}

// Equivalent tells the cache that the snapshots of commits a and b ("" the work
// tree) differ only in the repository paths changed (both sides' paths of a
// rename): a spec rendered in one of them whose inputs none of changed touches
// renders to the same result in the other, which takes it instead of rendering
// again. A result with failures is never taken (a failed build may not have read
// everything).
func (c *Cache) Equivalent(a, b string, changed []string) {
	if a == b || c.RenderBoth {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.twins == nil {
		c.twins = map[string][]twin{}
	}
	c.twins[a] = append(c.twins[a], twin{commit: b, changed: changed})
	c.twins[b] = append(c.twins[b], twin{commit: a, changed: changed})
}

// twin is a snapshot Equivalent relates to another.
type twin struct {
	commit  string
	changed []string
}

// Reused counts the renders Equivalent spared.
func (c *Cache) Reused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reused
}

// Made counts the renderings the run made (neither taken from the other ref nor
// from Store).
func (c *Cache) Made() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.made
}

// fromTwin is the result of spec's rendering in a twin of commit (Equivalent) that
// the change between them does not touch; nil when there is none. It waits for a
// twin's rendering under way, but not for one that is itself looking for a twin
// (each would wait for the other): e is the entry looking.
func (c *Cache) fromTwin(e *cacheEntry, commit, js string) *render.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.checking = true
	defer func() { e.checking = false }()
	for _, tw := range c.twins[commit] {
		t, ok := c.entries[tw.commit+"\x00"+js]
		if !ok || t.checking {
			continue
		}
		c.mu.Unlock()
		<-t.done
		c.mu.Lock()
		if t.err != nil || t.res == nil || len(t.res.Failures) > 0 {
			continue
		}
		if !slices.ContainsFunc(tw.changed, t.res.Inputs.Touched) {
			c.reused++
			return t.res
		}
	}
	return nil
}

// Store keeps renderings between runs, by the JSON of their spec
// (resultcache.Renders): what it is given, as it was given. Keep is given every
// rendering a run keeps, at once. Sum is the keyed hash a Secret's value is kept
// as (secrets.go): whoever reads the store cannot confirm a guessed value offline.
type Store interface {
	Load(spec []byte) (data []byte, ok bool)
	Keep(records []Record) error
	Sum(value string) string
}

// Record is a rendering as Store keeps it: the JSON of its spec, and its data
// (storedRender).
type Record struct {
	Spec, Data []byte
}

// keptRender is a rendering Save may keep, as its record's data (storedRender),
// made when it was rendered so that the run need not hold its objects; taken says
// it is the record it was taken from Store as.
type keptRender struct {
	data  []byte
	taken bool
}

// keepable says whether a rendering of spec at commit may be kept between runs: a
// commit's (the work tree has no object ids), of no cluster (Helm's lookup),
// complete.
func keepable(commit string, spec render.Spec, res *render.Result) bool {
	return commit != "" && spec.Helm.Lookup == "" && res != nil && len(res.Failures) == 0
}

// keep remembers a rendering for Save, until Save is called: the plan's and the
// preview's, as the record Save gives Store (stored, when it was taken from Store;
// otherwise made now, so that the preview can let its objects go as it goes). Of a
// spec asked for in two commits, the first asked is kept.
func (c *Cache) keep(commit string, stored []byte, spec render.Spec, js []byte, res *render.Result) {
	if c.Store == nil || c.InputID == nil || !keepable(commit, spec, res) {
		return
	}
	c.mu.Lock()
	_, have := c.kept[string(js)]
	skip := have || c.saved
	c.mu.Unlock()
	if skip {
		return
	}
	data := stored
	if data == nil {
		if data = c.record(commit, res); data == nil {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.saved {
		return
	}
	if c.kept == nil {
		c.kept = map[string]keptRender{}
	}
	if _, ok := c.kept[string(js)]; !ok {
		c.kept[string(js)] = keptRender{data: data, taken: stored != nil}
	}
}

// record is the data of res's record, made at commit (storedRender): nil when it
// cannot be kept (it read nothing, or a path InputID cannot vouch for, or its
// Secrets cannot be sealed).
func (c *Cache) record(commit string, res *render.Result) []byte {
	keys := inputKeys(res.Inputs)
	if len(keys) == 0 {
		return nil
	}
	objects, ok := c.objectsAt(commit, keys)
	if !ok {
		return nil
	}
	wire, ok := c.sealedWire(res)
	if !ok {
		return nil
	}
	head, err := json.Marshal(storedRender{Objects: objects})
	if err != nil {
		return nil
	}
	return append(append(head, '\n'), wire...)
}

// storedRender is what Save gives Store: the git object of each path the
// rendering read, by its key (inputKeys; "-" for a path that was not there), a
// line of JSON, then the rendering in the render worker's wire format, its
// Secrets' values sealed (secrets.go).
type storedRender struct {
	Objects map[string]string `json:"objects"`
}

// inputKeys name what a kept rendering read, as its record keys it: each tree by
// "tree:" and its path, each file by "file:" (a directory there was probed, and
// what it holds read path by path), each directory listed by "list:" (render.Inputs).
func inputKeys(in render.Inputs) []string {
	var out []string
	for _, p := range in.Trees {
		out = append(out, "tree:"+path.Clean(cmp.Or(p, ".")))
	}
	for _, p := range in.Files {
		out = append(out, "file:"+path.Clean(cmp.Or(p, ".")))
	}
	for _, p := range in.Dirs {
		out = append(out, "list:"+path.Clean(cmp.Or(p, ".")))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// inputReads are how each kind of inputKeys key read its path.
var inputReads = map[string]source.Read{"tree": source.ReadTree, "file": source.ReadEntry, "list": source.ReadListing}

// objectsAt are the git objects of the keys (inputKeys) at commit; ok is false
// when InputID cannot vouch for one of them.
func (c *Cache) objectsAt(commit string, keys []string) (map[string]string, bool) {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		kind, p, _ := strings.Cut(k, ":")
		read, known := inputReads[kind]
		if !known {
			return nil, false
		}
		id, ok := c.InputID(commit, p, read)
		if !ok {
			return nil, false
		}
		out[k] = cmp.Or(id, "-")
	}
	return out, true
}

// fromStore is spec's rendering at commit, whose files are fsys, taken from Store,
// and the record it was taken from: kept when every path it read was the object it
// is at commit, and its Secrets' values put back from those paths (unseal). nil
// when there is none.
func (c *Cache) fromStore(commit string, fsys fs.FS, spec render.Spec, js []byte) (*render.Result, []byte) {
	if c.Store == nil || c.InputID == nil || commit == "" || spec.Helm.Lookup != "" {
		return nil, nil
	}
	data, ok := c.Store.Load(js)
	if !ok {
		return nil, nil
	}
	head, wire, ok := bytes.Cut(data, []byte("\n"))
	var stored storedRender
	if !ok || json.Unmarshal(head, &stored) != nil || len(stored.Objects) == 0 {
		return nil, nil
	}
	keys := slices.Sorted(maps.Keys(stored.Objects))
	now, ok := c.objectsAt(commit, keys)
	if !ok || !maps.Equal(now, stored.Objects) {
		return nil, nil
	}
	resp, err := worker.DecodeResponse(wire)
	if err != nil || resp.Result == nil || len(resp.Result.Failures) > 0 || !slices.Equal(inputKeys(resp.Result.Inputs), keys) {
		return nil, nil
	}
	if n := bytes.Count(wire, placeholderJSON); n > 0 && !c.unseal(fsys, js, resp.Result, n) {
		return nil, nil
	}
	c.mu.Lock()
	c.stored++
	c.mu.Unlock()
	return resp.Result, data
}

// Save keeps the run's renderings in Store for the next runs, but for those holds
// says hold a secret (given each record's data: the git object of every path it
// read, then the rendering, its Secrets' values sealed). Those taken from Store are
// given again, as they were taken, so that the newest of Store's records holds all
// a run like this one needs. It returns how many renderings were taken from Store
// and how many others it kept. Nothing is kept after it is called.
func (c *Cache) Save(holds func(data []byte) bool) (taken, kept int) {
	c.mu.Lock()
	all, taken := c.kept, c.stored
	c.kept, c.saved = nil, true
	c.mu.Unlock()
	if c.Store == nil || c.InputID == nil {
		return taken, 0
	}
	var records []Record
	for _, js := range slices.Sorted(maps.Keys(all)) {
		k := all[js]
		if holds(k.data) {
			continue
		}
		records = append(records, Record{Spec: []byte(js), Data: k.data})
		if !k.taken {
			kept++
		}
	}
	if c.Store.Keep(records) != nil {
		return taken, 0
	}
	return taken, kept
}

// RenderSnapshot is Render of spec in a source snapshot (its commit names it; the
// work tree's is "", which a render worker opens again from the repository).
func (c *Cache) RenderSnapshot(snap *source.Snapshot, spec render.Spec) (*render.Result, error) {
	return c.Render(snap.Commit, snap.FS, spec)
}

// context is the run's (Worker.Context), which ends the charts' fetches; in this
// process without Worker, none.
func (c *Cache) context() context.Context {
	if c.Worker != nil {
		return c.Worker.Context()
	}
	return context.Background()
}

// Close ends the render workers (Worker.Close) and closes Store when it can be
// closed, once the run renders nothing more.
func (c *Cache) Close() {
	if c.Worker != nil {
		c.Worker.Close()
	}
	if closer, ok := c.Store.(io.Closer); ok {
		closer.Close()
	}
}

// Forget drops the cached rendering of spec in the snapshot of commit, once it is
// done: its caller took the objects for good (the preview, which drops each object
// as soon as its preview is done), and another asking for it renders it again.
func (c *Cache) Forget(commit string, spec render.Spec) {
	js, err := json.Marshal(spec)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, commit+"\x00"+string(js))
}

// renderFetched renders spec, completed with the charts it fetched, with the notes
// of the fetch (extra, nil for none) after its own; the cached result is not changed.
func (c *Cache) renderFetched(commit string, fsys fs.FS, spec render.Spec, extra *render.Result) (*render.Result, error) {
	res, err := c.Render(commit, fsys, spec)
	if err != nil || extra == nil {
		return res, err
	}
	out := *res
	out.Notes = append(append([]string(nil), res.Notes...), extra.Notes...)
	return &out, nil
}

// Render returns the cached rendering of spec in the snapshot of commit ("" for the
// work tree), whose files are fsys, rendering it on first use. Results are shared:
// callers must not modify them.
func (c *Cache) Render(commit string, fsys fs.FS, spec render.Spec) (*render.Result, error) {
	if spec.Renderer == render.RendererHelm && spec.Helm.Chart != nil && spec.Helm.Archive == "" {
		fetched, extra := render.FetchChart(c.context(), c.Charts, spec)
		if extra != nil && len(extra.Failures) > 0 {
			return extra, nil
		}
		return c.renderFetched(commit, fsys, fetched, extra)
	}
	if c.Charts != nil && (spec.Renderer == render.RendererHelm && spec.Helm.Chart == nil && spec.Helm.Dependencies == nil ||
		spec.Renderer == render.RendererKustomize && !spec.AsFlux && spec.HelmCharts == nil) {
		fetch := render.FetchDependencies
		if spec.Renderer == render.RendererKustomize {
			fetch = render.FetchHelmCharts
		}
		fetched, extra := fetch(c.context(), c.Charts, fsys, spec)
		if extra != nil && len(extra.Failures) > 0 {
			return extra, nil
		}
		if fetched.Helm.Dependencies != nil || fetched.HelmCharts != nil {
			return c.renderFetched(commit, fsys, fetched, extra)
		}
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
		e = &cacheEntry{done: make(chan struct{})}
		c.entries[key] = e
	}
	var lookup *lookupCluster
	if spec.Renderer == render.RendererHelm && spec.Helm.Lookup != "" {
		lookup = c.lookups[spec.Helm.Lookup]
	}
	c.mu.Unlock()
	e.once.Do(func() {
		defer close(e.done)
		if res := c.fromTwin(e, commit, string(js)); res != nil {
			e.res = res
			c.keep(commit, nil, spec, js, res)
			return
		}
		if res, data := c.fromStore(commit, fsys, spec, js); res != nil {
			e.res = res
			c.keep(commit, data, spec, js, res)
			return
		}
		defer func() {
			c.mu.Lock()
			c.made++
			c.mu.Unlock()
			if e.err == nil {
				c.keep(commit, nil, spec, js, e.res)
			}
		}()
		if c.Worker != nil {
			var ep *worker.LookupEndpoint
			if lookup != nil {
				if ep, e.err = lookup.endpoint(c.Worker.Context()); e.err != nil {
					return
				}
			}
			if ep != nil {
				e.res, e.err = c.Worker.Render(commit, spec, ep)
				return
			}
			e.res, e.err = c.Worker.Queue(commit, spec)
			return
		}
		var cfg *rest.Config
		if lookup != nil {
			// Through the proxy too, so templates see the cluster as in a worker.
			ep, err := lookup.endpoint(context.Background())
			if err != nil {
				e.err = err
				return
			}
			cfg = ep.Config()
		}
		e.res, e.err = render.RenderWith(fsys, spec, render.DefaultLimits(), cfg)
	})
	return e.res, e.err
}
