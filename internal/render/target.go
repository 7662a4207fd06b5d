package render

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
	kustypes "sigs.k8s.io/kustomize/api/types"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/source"
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
	// Renderer is plain, kustomize, helm or resourceset, as plan decided it (from
	// drift.yaml, or Detect); a spec without one renders as a failure.
	Renderer string
	// Helm holds the options of a helm target.
	Helm HelmOptions
	// AsFlux builds a kustomize target as Flux's kustomize-controller does: a
	// directory without a kustomization file over one generated as Flux generates it
	// (KustomizeAsFlux).
	AsFlux bool `json:",omitempty"`
	// HelmCharts are the fetched archives of a kustomization's helmCharts entries
	// whose charts are not in the repository, by chartKey (set by the render cache).
	HelmCharts map[string]string `json:",omitempty"`
	// FluxIgnore is the GitRepository's spec.ignore, left out of an AsFlux build
	// with the repository's .sourceignore files and Flux's default exclusions.
	FluxIgnore string `json:",omitempty"`
	// ArtifactExcludes are the exclude patterns of the ArtifactGenerator copies that
	// make the ExternalArtifact an AsFlux build reads, left out of it as FluxIgnore.
	ArtifactExcludes []ArtifactExclude `json:",omitempty"`
	// Kustomize is what an applier sets on a kustomize target's kustomization before
	// building it: Argo CD's kustomize options (its `kustomize edit` calls) and a Flux
	// Kustomization's spec (its generator). Nil leaves the kustomization as it is.
	Kustomize *KustomizeOptions `json:",omitempty"`
	// Directory is Argo CD's directory options for a plain target; nil reads the
	// directory as drift does (recursively).
	Directory *DirectoryOptions `json:",omitempty"`
	// Substitute is a Flux Kustomization's postBuild variables (substituteFrom read,
	// substitute over them), replaced in the built objects as Flux replaces them; nil
	// substitutes nothing.
	Substitute map[string]string `json:",omitempty"`
	// ResourceSet is the Flux Operator ResourceSet a target of RendererResourceSet
	// renders.
	ResourceSet *ResourceSetSpec `json:",omitempty"`
	// ObjectsOnly reads a plain target's Kubernetes objects only: a document without
	// apiVersion or kind (a values file, Chart.yaml, another tool's YAML) is no object
	// and no failure, and a note names the files that hold such documents. For a path
	// drift previews on its own, which no applier defines.
	ObjectsOnly bool `json:",omitempty"`
	// Decrypt is a Flux Kustomization's spec.decryption.provider ("sops"): what
	// applies the target decrypts its SOPS-encrypted Secrets first. The render
	// leaves them as written; drift's own process decrypts them (internal/sopsdoc).
	Decrypt string `json:",omitempty"`
	// Overlay are files drift's own process replaced before the build, by
	// slash-separated repository path, which the build reads in place of the
	// repository's: the files a Flux Kustomization's secretGenerators read, decrypted
	// as kustomize-controller decrypts them (preview's decryptSources), and
	// kustomization files whose KSOPS generators are read as resources. Never in JSON
	// (the render cache's key): Overlaid, a digest of the replaced files as the
	// repository holds them, stands for it there.
	Overlay  map[string]string `json:"-"`
	Overlaid string            `json:",omitempty"`
}

// KustomizeOptions are edits to a kustomization, made as `kustomize edit` makes them
// (Argo CD) and as Flux's generator makes them, before the build.
type KustomizeOptions struct {
	NamePrefix string `json:",omitempty"`
	NameSuffix string `json:",omitempty"`
	// Namespace replaces the kustomization's namespace (Argo CD's kustomize.namespace,
	// Flux's targetNamespace).
	Namespace string `json:",omitempty"`
	// Images replace the kustomization's image of the same name, or are added.
	Images []kustypes.Image `json:",omitempty"`
	// MergeImages sets only the fields an image gives on the kustomization's image of
	// the same name, its tag and digest together (Flux's generator), instead of
	// replacing the entry (`kustomize edit set image`, which Argo CD runs).
	MergeImages bool `json:",omitempty"`
	// CommonLabels and CommonAnnotations are added to the kustomization's own; one it
	// already has is replaced only when forced (Argo CD's forceCommonLabels and
	// forceCommonAnnotations, kustomize edit's --force), else the build fails as
	// `kustomize edit add` fails.
	CommonLabels           map[string]string `json:",omitempty"`
	CommonAnnotations      map[string]string `json:",omitempty"`
	ForceCommonLabels      bool              `json:",omitempty"`
	ForceCommonAnnotations bool              `json:",omitempty"`
	// Replicas set the count of the named workloads, replacing an entry of the same
	// name (`kustomize edit set replicas`, Argo CD's kustomize.replicas).
	Replicas []kustypes.Replica `json:",omitempty"`
	// Patches and Components are added after the kustomization's own.
	Patches    []kustypes.Patch `json:",omitempty"`
	Components []string         `json:",omitempty"`
}

// DirectoryOptions are Argo CD's options for a directory of manifests.
type DirectoryOptions struct {
	// Recurse reads subdirectories too (Argo CD's default is not to).
	Recurse bool `json:",omitempty"`
	// Include and Exclude are Argo CD's globs over paths relative to the directory
	// ({a,b} alternatives allowed); empty includes everything, excludes nothing.
	Include string `json:",omitempty"`
	Exclude string `json:",omitempty"`
}

// Detect picks the renderer for a path: a directory with a kustomization file is
// kustomize, one with Chart.yaml is Helm, and so is a chart whose Chart.yaml a build
// step generates (Chart.template.yaml, or values.yaml and templates/): its templates
// are not YAML, and the Helm renderer says, once, what is missing. Anything else is
// plain.
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
	if _, unbuilt := unbuiltChart(fsys, dir); unbuilt {
		return RendererHelm
	}
	return RendererPlain
}

// Render renders one target in this process, with the default limits on output and
// objects; the limits on memory, stack and time need a worker (Worker). An error
// means the target could not be attempted at all (its path is missing); what fails
// while rendering is in the result's Failures.
func Render(fsys fs.FS, spec Spec) (*Result, error) {
	return RenderWith(fsys, spec, DefaultLimits(), nil)
}

// RenderWith renders spec in this process under limits (a render worker's rendering);
// lookup is the connection for a Helm target's lookup, if any.
func RenderWith(fsys fs.FS, spec Spec, limits Limits, lookup *rest.Config) (*Result, error) {
	if len(spec.Overlay) > 0 {
		fsys = overlayFS{FS: fsys, files: spec.Overlay}
	}
	var res *Result
	var err error
	switch spec.Renderer {
	case "":
		// plan decides every target's renderer (plan.Resolve); render never does.
		return &Result{Failures: []Failure{{Source: TargetSource(spec), Reason: reason.RenderFailed,
			Message: "no renderer was decided for this target: this is a bug in drift, please report it"}}}, nil
	case RendererPlain:
		res, err = Plain(fsys, Options{Paths: []string{spec.Path}, Directory: spec.Directory, ObjectsOnly: spec.ObjectsOnly})
	case RendererKustomize:
		res = kustomizeSpec(fsys, spec)
	case RendererHelm:
		res = helm(fsys, spec.Path, spec.Helm, limits, lookup)
	case RendererResourceSet:
		if spec.ResourceSet == nil {
			return nil, fmt.Errorf("a ResourceSet target without its ResourceSet: this is a bug in drift, please report it")
		}
		res = resourceSet(spec.ResourceSet, limits)
	default:
		return nil, fmt.Errorf("unknown renderer %q: use plain, kustomize or helm", spec.Renderer)
	}
	capObjects(res, spec, limits.Objects)
	if err == nil {
		explainEmpty(fsys, spec, res)
	}
	return res, err
}

// Worker renders specs out of drift's process, each in a render worker under the
// run's limits: internal/render/worker's Pool.
type Worker interface {
	// Render renders spec in the snapshot of commit ("" for the work tree) on its
	// own, its Helm lookup reading the cluster through lookup.
	Render(commit string, spec Spec, lookup *LookupEndpoint) (*Result, error)
	// Queue renders spec in the snapshot of commit in a batch with the other specs
	// waiting.
	Queue(commit string, spec Spec) (*Result, error)
	// Expand expands an ApplicationSet; what names it in messages. A worker that
	// gave no answer is a *WorkerFailure.
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
	Charts ChartFetcher

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
	// commits are kept, never one that reads a cluster (Helm's lookup), and only
	// when Save is told it holds no secret.
	Store   Store
	InputID func(commit, path string, read source.Read) (id string, ok bool)

	mu      sync.Mutex
	entries map[string]*cacheEntry
	lookups map[string]*lookupCluster
	// twins are the snapshots Equivalent relates, by commit; reused counts the
	// renders they spared.
	twins  map[string][]twin
	reused int
	// kept are the renderings of the run Save may keep, by spec; stored counts the
	// renderings taken from Store; saved says Save was called, after which nothing
	// more is kept.
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
// gave no answer is a *WorkerFailure.
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
	res  *Result
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
func (c *Cache) fromTwin(e *cacheEntry, commit, js string) *Result {
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
// rendering a run keeps, at once.
type Store interface {
	Load(spec []byte) (data []byte, ok bool)
	Keep(records []Record) error
}

// Record is a rendering as Store keeps it: the JSON of its spec, and its data
// (storedRender).
type Record struct {
	Spec, Data []byte
}

// keptRender is a rendering Save may keep: the commit it was asked for, and when
// it was taken from Store, the record it was taken from (stored).
type keptRender struct {
	commit string
	stored []byte
	res    *Result
}

// keepable says whether a rendering of spec at commit may be kept between runs: a
// commit's (the work tree has no object ids), of no cluster (Helm's lookup),
// complete.
func keepable(commit string, spec Spec, res *Result) bool {
	return commit != "" && spec.Helm.Lookup == "" && res != nil && len(res.Failures) == 0
}

// keep remembers a rendering for Save (until Save is called: the renderings of the
// plan are kept, not those of the preview, which it lets go as it goes); of a spec
// asked for in two commits, the first asked (the head: it is planned first) is
// kept.
func (c *Cache) keep(commit string, stored []byte, spec Spec, js []byte, res *Result) {
	if c.Store == nil || !keepable(commit, spec, res) {
		return
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
		c.kept[string(js)] = keptRender{commit: commit, stored: stored, res: res}
	}
}

// storedRender is what Save gives Store: the git object of each path the
// rendering read, by its key (inputKeys; "-" for a path that was not there), a
// line of JSON, then the rendering in the render worker's wire format.
type storedRender struct {
	Objects map[string]string `json:"objects"`
}

// inputKeys name what a kept rendering read, as its record keys it: each tree by
// "tree:" and its path, each file by "file:" (a directory there was probed, and
// what it holds read path by path), each directory listed by "list:" (Inputs).
func inputKeys(in Inputs) []string {
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

// fromStore is spec's rendering at commit taken from Store, and the record it was
// taken from: kept when every path it read was the object it is at commit. nil
// when there is none.
func (c *Cache) fromStore(commit string, spec Spec, js []byte) (*Result, []byte) {
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
	resp, err := DecodeResponse(wire)
	if err != nil || resp.Result == nil || len(resp.Result.Failures) > 0 || !slices.Equal(inputKeys(resp.Result.Inputs), keys) {
		return nil, nil
	}
	c.mu.Lock()
	c.stored++
	c.mu.Unlock()
	return resp.Result, data
}

// Save keeps the run's renderings in Store for the next runs, with the git object
// of every path each read, but for those holds says hold a secret (the encoding of
// each is what holds reads: the render worker's wire format, or the record a
// rendering was taken from) and those that read a path InputID cannot vouch for.
// Those taken from Store are given again, as they were taken, so that the newest of
// Store's records holds all a run like this one needs. It returns how many
// renderings were taken from Store and how many others it kept.
func (c *Cache) Save(holds func(res *Result, encoded []byte) bool) (taken, kept int) {
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
		if k.stored != nil {
			if !holds(k.res, k.stored) {
				records = append(records, Record{Spec: []byte(js), Data: k.stored})
			}
			continue
		}
		keys := inputKeys(k.res.Inputs)
		if len(keys) == 0 {
			continue
		}
		objects, ok := c.objectsAt(k.commit, keys)
		if !ok {
			continue
		}
		wire, err := EncodeResponse(WorkResponse{Result: k.res})
		if err != nil || holds(k.res, wire) {
			continue
		}
		head, err := json.Marshal(storedRender{Objects: objects})
		if err != nil {
			continue
		}
		records = append(records, Record{Spec: []byte(js), Data: append(append(head, '\n'), wire...)})
		kept++
	}
	if c.Store.Keep(records) != nil {
		return taken, 0
	}
	return taken, kept
}

// RenderSnapshot is Render of spec in a source snapshot (its commit names it; the
// work tree's is "", which a render worker opens again from the repository).
func (c *Cache) RenderSnapshot(snap *source.Snapshot, spec Spec) (*Result, error) {
	return c.Render(snap.Commit, snap.FS, spec)
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
func (c *Cache) Forget(commit string, spec Spec) {
	js, err := json.Marshal(spec)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, commit+"\x00"+string(js))
}

// Render returns the cached rendering of spec in the snapshot of commit ("" for the
// work tree), whose files are fsys, rendering it on first use. Results are shared:
// callers must not modify them.
func (c *Cache) Render(commit string, fsys fs.FS, spec Spec) (*Result, error) {
	if spec.Renderer == RendererHelm && spec.Helm.Chart != nil && spec.Helm.Archive == "" {
		fetched, extra := c.fetchChart(spec)
		if extra != nil && len(extra.Failures) > 0 {
			return extra, nil
		}
		res, err := c.Render(commit, fsys, fetched)
		if err != nil || extra == nil {
			return res, err
		}
		out := *res
		out.Notes = append(append([]string(nil), res.Notes...), extra.Notes...)
		return &out, nil
	}
	if c.Charts != nil && (spec.Renderer == RendererHelm && spec.Helm.Chart == nil && spec.Helm.Dependencies == nil ||
		spec.Renderer == RendererKustomize && !spec.AsFlux && spec.HelmCharts == nil) {
		fetch := c.fetchDependencies
		if spec.Renderer == RendererKustomize {
			fetch = c.fetchHelmCharts
		}
		fetched, extra := fetch(fsys, spec)
		if extra != nil && len(extra.Failures) > 0 {
			return extra, nil
		}
		if fetched.Helm.Dependencies != nil || fetched.HelmCharts != nil {
			res, err := c.Render(commit, fsys, fetched)
			if err != nil || extra == nil {
				return res, err
			}
			out := *res
			out.Notes = append(append([]string(nil), res.Notes...), extra.Notes...)
			return &out, nil
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
	if spec.Renderer == RendererHelm && spec.Helm.Lookup != "" {
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
		if res, data := c.fromStore(commit, spec, js); res != nil {
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
			var ep *LookupEndpoint
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
		e.res, e.err = RenderWith(fsys, spec, DefaultLimits(), cfg)
	})
	return e.res, e.err
}
