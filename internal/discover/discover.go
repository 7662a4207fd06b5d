package discover

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// DefaultDepth bounds how far discovery follows objects that render objects.
const DefaultDepth = 5

// DefaultMaxTargets bounds how many targets discovery makes (the runner's
// --max-targets): a fleet of a thousand Applications fits many times over, an
// app-of-apps or ApplicationSet that multiplies without end does not.
const DefaultMaxTargets = 2000

// Options say where to look and how to render what is found.
type Options struct {
	// Paths are the repository paths whose files are searched ("" or none: the whole
	// repository).
	Paths []string
	// Roots, when not nil, are the cluster roots of the fleet (Result.Roots) to use
	// instead of those found: a pull request's, the same for both refs.
	Roots []string
	// RepoURLs are the URLs this repository is known by (its git remotes, drift.yaml's
	// repoURLs): a source with one of them renders from the ref previewed.
	RepoURLs []string
	// Revisions are the revisions that mean the ref previewed, beside "" and HEAD: the
	// default branch, the base and the head branch of a pull request.
	Revisions []string
	// Render renders a spec of the snapshot discovered (through the run's cache), to
	// follow what a target renders.
	Render func(render.Spec) (*render.Result, error)
	// Depth bounds the following (DefaultDepth when 0).
	Depth int
	// MaxTargets bounds the targets discovery makes (DefaultMaxTargets when 0): past
	// it, what would make more is an error naming it, and the rest is reported.
	MaxTargets int
	// Expand expands an ApplicationSet (what names it in messages), in a render
	// worker under the run's limits; nil: in this process (package tests).
	Expand func(req appset.Request, what string) (*appset.Result, error)
	// LiveClusters reads the Argo CD cluster Secrets of a namespace from the cluster
	// drift runs against (read-only; never their credentials); nil when drift has no
	// live cluster (an ephemeral run, drift targets).
	LiveClusters func(namespace string) ([]appset.Cluster, error)
	// Clusters are cluster Secrets drift.yaml names (argocdClusters), beside those the
	// repository holds and the live ones.
	Clusters []appset.Cluster
	// LiveObject reads an object the repository does not hold (a ConfigMap, a Secret,
	// a Flux source) from the cluster drift runs against (read-only; nil, nil when it
	// is not there); nil when drift has no live cluster (an ephemeral run, drift
	// targets).
	LiveObject func(kind, namespace, name string) (*unstructured.Unstructured, error)
	// Sources are Flux sources drift.yaml names (fluxSources), for what neither the
	// repository nor a live cluster holds.
	Sources []*unstructured.Unstructured
	// Scanned, when set, remembers across runs what reading a file's content as
	// text found (by its content's git object id), so that files read before are not
	// read again.
	Scanned Scans
}

// Scans are what reading files as text found, by their content's git object id.
type Scans interface {
	// Scanned is what was found in the content with id, if it was read before.
	Scanned(id string) (Scan, bool)
	// Remember records what was found in the content with id.
	Remember(id string, s Scan)
}

// Scan is what reading one file as text found.
type Scan uint8

// What a file's text is.
const (
	// ScanNames: it names an Argo CD or Flux API group.
	ScanNames Scan = 1 + iota
	// ScanPlain: it names none.
	ScanPlain
	// ScanUnread: it is too large to read (the render says so).
	ScanUnread
	// ScanInert: it names none, and its documents decode to no object a reference
	// names (pooled): discovery need not decode it again.
	ScanInert
)

// blobHasher is a file system that knows its files' git object ids
// (source.Snapshot's of a commit).
type blobHasher interface {
	BlobHash(name string) (string, error)
}

// Result is what discovery found.
type Result struct {
	// Targets are in the order they are applied: a Flux object after what it
	// depends on, otherwise by name.
	Targets []Target
	// Failures are files that look like Argo CD or Flux objects but cannot be read.
	Failures []render.Failure
	// Found says whether the searched files hold any Argo CD or Flux object.
	Found bool
	// Secrets are the values of Secrets the targets' definitions read: they must never
	// appear in the report.
	Secrets []string
	// Roots are the cluster roots of a fleet repository, sorted: two or more
	// directories a flux-system Kustomization or a FluxInstance written in the
	// repository syncs, each one cluster's; none when there are fewer than two.
	Roots []string
	// Interrupted says the run ended (its deadline, a signal) before discovery
	// finished: Targets are those found until then, and a not-checked failure says
	// where it stopped.
	Interrupted bool
}

// found is an applier object and where it was met.
type found struct {
	obj render.Object
	// root is the cluster root of a fleet the object belongs to ("": none).
	root string
	// near is the render the object came from (nil: the repository's files).
	near   []render.Object
	from   string
	parent string
	depth  int
	// built is the kustomize directory discovery built on its own that the object
	// came from ("": a file, or a target's render).
	built string
	// asked says its renderings were asked for ahead (askAhead).
	asked bool
	// deferred says built is a directory that a Flux Kustomization or an Argo CD
	// Application of the repository names but no target of the discovery built (it
	// was skipped or refused, or reads another source): what applies the object is
	// not one drift followed.
	deferred bool
}

// Discover searches fsys for Argo CD and Flux objects and follows what they render.
// It stops at once when ctx ends, with an error of ctx's cause and the Result of
// what it found until then (Result.Interrupted).
func Discover(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	if opts.Depth == 0 {
		opts.Depth = DefaultDepth
	}
	if opts.MaxTargets <= 0 {
		opts.MaxTargets = DefaultMaxTargets
	}
	if opts.Expand == nil {
		opts.Expand = func(req appset.Request, _ string) (*appset.Result, error) { return appset.Generate(ctx, fsys, req) }
	}
	charts := chartDirs{fsys: fsys, known: map[string]bool{}}
	read := &scanned{inert: map[string]bool{}, ids: map[string]string{}}
	files, err := candidates(fsys, opts.Paths, charts, opts.Scanned, read)
	if err != nil {
		return nil, err
	}
	out := &Result{}
	// The objects Argo CD and Flux objects refer to (sources, ConfigMaps, Secrets)
	// may be anywhere in the repository, and so may what a kustomization of the
	// paths includes.
	everywhere := files
	if len(opts.Paths) > 0 {
		if everywhere, err = candidates(fsys, nil, charts, opts.Scanned, read); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(slices.Collect(maps.Values(everywhere)), true) {
		return out, nil // no file names an Argo CD or Flux API group
	}
	layout := layoutOf(fsys, sortedKeys(everywhere))
	d := &discovery{fsys: fsys, opts: opts, pool: newPool(nil, opts.Paths), byName: map[string]int{}, named: everywhere, layout: layout}
	defer d.ahead.Wait()
	var queue []found
	// builtByTarget are the directories the Flux Kustomizations and Argo CD
	// Applications written in the repository's files name.
	builtByTarget := map[string]bool{}
	var names []string
	for _, name := range sortedKeys(everywhere) {
		if !read.inert[name] { // an inert file was decoded by an earlier run: it defines nothing discovery reads
			names = append(names, name)
		}
	}
	// File by file: a repository with a directory per cluster defines one object in
	// several files, which is not an error here. The files are decoded side by side,
	// a few hundred at a time, and read in order.
	var decoded []*render.Result
	var errs []error
	for i, name := range names {
		if i%decodeAhead == 0 {
			decoded, errs = decodeFiles(fsys, names[i:min(i+decodeAhead, len(names))])
		}
		res, err := decoded[i%decodeAhead], errs[i%decodeAhead]
		if err != nil {
			return nil, err
		}
		d.pool.add(res.Objects)
		if id := read.ids[name]; id != "" && !everywhere[name] && !slices.ContainsFunc(res.Objects, func(o render.Object) bool { return pooled[o.Get().GetKind()] }) {
			opts.Scanned.Remember(id, ScanInert)
		}
		for _, o := range res.Objects {
			for _, dir := range buildsOf(o.Get()) {
				builtByTarget[dir] = true
			}
		}
		if !files[name] || layout.inputs[name] {
			continue // a kustomization's input is read as kustomize builds it, below
		}
		out.Failures = append(out.Failures, res.Failures...)
		for _, o := range res.Objects {
			if isApplierObject(o.Get()) {
				queue = append(queue, found{obj: o, from: o.Where()})
			}
		}
	}
	// A kustomize directory nothing else includes is what Flux and Argo CD apply of
	// it: its objects are what kustomize builds, patches applied. One that a Flux
	// Kustomization or an Argo CD Application written in the repository names is
	// built by that target (with its namespace, substitutions and patches), which
	// finds its objects as they are applied: it is built on its own only when no
	// target of the discovery builds it (deferred, below).
	var deferred []string
	bare := func(root string) []found {
		res, err := opts.Render(render.Spec{Path: root, Renderer: render.RendererKustomize, AsFlux: true})
		if err != nil || res == nil {
			return nil
		}
		out.Failures = append(out.Failures, res.Failures...)
		d.pool.add(res.Objects)
		var fs []found
		for _, o := range res.Objects {
			if isApplierObject(o.Get()) {
				fs = append(fs, found{obj: o, near: res.Objects, from: o.Where() + ", built by " + layout.kustomizations[root], built: root})
			}
		}
		return fs
	}
	for _, root := range layout.roots {
		if len(opts.Paths) > 0 && !underAny(root, opts.Paths) {
			continue
		}
		if !slices.ContainsFunc(layout.closure(root), func(f string) bool { return everywhere[f] }) {
			continue // names no Argo CD or Flux API group: nothing to discover
		}
		if builtByTarget[cmp.Or(path.Clean(root), ".")] {
			deferred = append(deferred, root)
			continue
		}
		if ctx.Err() != nil {
			return out, d.interrupted(ctx, out, render.Failure{Source: root})
		}
		queue = append(queue, bare(root)...)
	}
	if len(queue) == 0 {
		// Nothing else to start from: the named directories are built on their own.
		for _, root := range deferred {
			if ctx.Err() != nil {
				return out, d.interrupted(ctx, out, render.Failure{Source: root})
			}
			for _, f := range bare(root) {
				f.deferred = true
				queue = append(queue, f)
			}
		}
		deferred = nil
	}
	if len(queue) == 0 {
		// Files that mention Argo CD or Flux (an annotation, a patch) define nothing:
		// the paths are previewed as they are.
		return &Result{}, nil
	}
	out.Found = true
	// A FluxInstance makes the GitRepository its cluster's objects name: read first.
	slices.SortStableFunc(queue, func(a, b found) int {
		return cmp.Compare(fluxInstanceFirst(a), fluxInstanceFirst(b))
	})
	d.roots = opts.Roots
	if d.roots == nil {
		d.roots = clusterRoots(queue, files)
	}
	out.Roots = d.roots
	for i := range queue {
		queue[i].root = d.rootOf(queue[i])
	}
	synced := syncedBy(queue)
	for i := range queue {
		if r := synced[queue[i].built]; queue[i].built != "" && r != "" {
			queue[i].root = r
		}
	}
	for len(queue) > 0 || len(deferred) > 0 {
		if len(queue) == 0 {
			// The named directories no target built (its object skipped, refused, or
			// of another source): built on their own, as any other.
			for _, root := range deferred {
				if d.builds(root) {
					continue
				}
				if ctx.Err() != nil {
					return out, d.interrupted(ctx, out, render.Failure{Source: root})
				}
				for _, f := range bare(root) {
					f.deferred = true
					f.root = d.rootOf(f)
					if r := synced[f.built]; r != "" {
						f.root = r
					}
					queue = append(queue, f)
				}
			}
			deferred = nil
			continue
		}
		if !queue[0].asked {
			d.askAhead(ctx, queue)
		}
		f := queue[0]
		if ctx.Err() != nil {
			return out, d.interrupted(ctx, out, f.failure())
		}
		queue = queue[1:]
		if len(d.targets) >= opts.MaxTargets {
			d.overBudget(f, out)
			continue
		}
		// What the run's end cuts short (a worker stopped) is not a finding: the
		// object being followed then is undone, and named as where discovery stopped.
		done := d.mark(out)
		ts := d.targetsOf(f, opts.MaxTargets-len(d.targets))
		if f.depth+1 <= opts.Depth {
			d.prefetch(ctx, ts)
		}
		if ctx.Err() != nil {
			d.undo(out, done)
			return out, d.interrupted(ctx, out, f.failure())
		}
		for _, t := range ts {
			if len(d.targets) >= opts.MaxTargets {
				d.overBudget(f, out)
				break
			}
			if !d.add(t) || t.Skipped != "" || t.Refused != "" {
				continue
			}
			if f.depth+1 > opts.Depth {
				continue
			}
			for _, child := range d.children(t) {
				child.depth, child.root = f.depth+1, f.root
				queue = append(queue, child)
			}
		}
		if len(queue) > 0 && !queue[len(queue)-1].asked {
			// What f renders is asked for now, beside what waits before it.
			d.askAhead(ctx, queue)
		}
	}
	out.Targets = ordered(d.rooted())
	out.Secrets = uniqueSorted(d.secrets)
	return out, nil
}

// decodeAhead is how many files discovery decodes side by side before it reads them.
const decodeAhead = 256

// decodeFiles decodes each of names on its own (render.Plain), in GOMAXPROCS
// goroutines.
func decodeFiles(fsys fs.FS, names []string) ([]*render.Result, []error) {
	out := make([]*render.Result, len(names))
	errs := make([]error, len(names))
	var next atomic.Int64
	var decoders sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(names)) {
		decoders.Go(func() {
			for i := int(next.Add(1) - 1); i < len(names); i = int(next.Add(1) - 1) {
				out[i], errs[i] = render.Plain(fsys, render.Options{Paths: []string{names[i]}})
			}
		})
	}
	decoders.Wait()
	return out, errs
}

// buildsOf are the repository directories an applier object names as what it builds:
// a Flux Kustomization's path, an Argo CD Application's sources' paths.
func buildsOf(obj *unstructured.Unstructured) []string {
	if obj == nil || !isApplierObject(obj) {
		return nil
	}
	var out []string
	switch obj.GetKind() {
	case KindKustomization:
		if p, ok, _ := unstructured.NestedString(obj.Object, "spec", "path"); ok {
			out = append(out, p)
		}
	case KindApplication:
		if p, ok, _ := unstructured.NestedString(obj.Object, "spec", "source", "path"); ok {
			out = append(out, p)
		}
		sources, _, _ := unstructured.NestedSlice(obj.Object, "spec", "sources")
		for _, s := range sources {
			if m, ok := s.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					out = append(out, p)
				}
			}
		}
	}
	for i, p := range out {
		out[i] = cmp.Or(repoPath(p), ".")
	}
	return out
}

// builds reports whether a target of the discovery, previewed, renders the
// repository directory dir.
func (d *discovery) builds(dir string) bool {
	dir = cmp.Or(path.Clean(dir), ".")
	for _, t := range d.targets {
		if t.Skipped != "" || t.Refused != "" {
			continue
		}
		for _, spec := range t.Specs {
			if cmp.Or(path.Clean(cmp.Or(spec.Path, ".")), ".") == dir {
				return true
			}
		}
	}
	return false
}

// fluxInstanceFirst is 0 for a FluxInstance, 1 for any other object.
func fluxInstanceFirst(f found) int {
	if f.obj.Get().GetKind() == KindFluxInstance {
		return 0
	}
	return 1
}

// mark is how far discovery had got: what undo goes back to.
type mark struct{ targets, failures, secrets int }

func (d *discovery) mark(out *Result) mark {
	return mark{len(d.targets), len(out.Failures), len(d.secrets)}
}

// undo forgets what discovery found since m.
func (d *discovery) undo(out *Result, m mark) {
	for _, t := range d.targets[m.targets:] {
		delete(d.byName, t.Name+"\x00"+t.Cluster)
	}
	d.targets, out.Failures, d.secrets = d.targets[:m.targets], out.Failures[:m.failures], d.secrets[:m.secrets]
}

// interrupted completes out with what discovery found before ctx ended (the run's
// deadline, a signal) and a not-checked failure at where, where it stopped, and
// returns the error that says so: the run reports what it found, each target not
// previewed.
func (d *discovery) interrupted(ctx context.Context, out *Result, where render.Failure) error {
	err := fmt.Errorf("discovery of the repository's Argo CD and Flux objects interrupted: %w", context.Cause(ctx))
	why := fmt.Sprintf("%v", context.Cause(ctx))
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		why += "; raise --timeout"
	}
	where.Reason = reason.NotChecked
	where.Message = "discovery stopped here: the run ended (" + why + "); what this defines, and what discovery had not reached, is neither found nor previewed"
	out.Failures = append(out.Failures, where)
	out.Interrupted = true
	out.Targets = ordered(d.rooted())
	out.Secrets = uniqueSorted(d.secrets)
	return err
}

// failure is a failure at f's place, naming its object.
func (f found) failure() render.Failure {
	id := f.obj.ID()
	return render.Failure{Source: f.obj.Source, Doc: f.obj.Doc, Item: f.obj.Item, ID: &id}
}

// overBudget records that what f defines or renders was not followed: discovery
// made --max-targets targets already. One failure per parent (or file) says so.
func (d *discovery) overBudget(f found, out *Result) {
	who := f.parent
	if who == "" {
		who = f.from
	}
	if d.overflowed[who] {
		return
	}
	if d.overflowed == nil {
		d.overflowed = map[string]bool{}
	}
	d.overflowed[who] = true
	what := "the objects of " + f.from
	if f.parent != "" {
		what = "what " + f.parent + " renders"
	}
	source := f.from
	if f.obj.Source != "" {
		source = f.obj.Source
	}
	out.Failures = append(out.Failures, render.Failure{Source: source, Doc: f.obj.Doc, Reason: reason.TooLarge, Message: fmt.Sprintf(
		"discovery made %d targets, the most --max-targets allows, and did not follow %s: an app of apps or ApplicationSet that multiplies without end? Raise --max-targets if the repository really defines more",
		d.opts.MaxTargets, what)})
}

// discovery is one run of Discover.
type discovery struct {
	fsys fs.FS
	opts Options
	// ahead are the renderings askAhead asked for, which Discover waits for: nothing
	// it started renders after it returns.
	ahead   sync.WaitGroup
	pool    *pool
	targets []Target
	byName  map[string]int
	// secrets are the values of the repository's Secrets a target's definition reads
	// (substitution variables, values), for the report's scrubber.
	secrets []string
	// near is the render the object being read came from.
	near []render.Object
	// sourceIgnore is the spec.ignore of the GitRepository fluxSource last read.
	sourceIgnore string
	// overflowed are the parents whose children went past MaxTargets, said once.
	overflowed map[string]bool
	// named are the repository's manifest files, true for those that name an Argo CD
	// or Flux API group; namedDirs those files and the directories that hold them.
	named, namedDirs map[string]bool
	// layout is the repository's kustomizations.
	layout *kustomizeLayout
	// roots are the fleet's cluster roots (Result.Roots).
	roots []string
	// sourceUnknown says the source fluxSource last read may be this repository
	// (found nowhere, or an artifact) though discovery cannot tell.
	sourceUnknown bool
	// artifactPrefix is the repository directory the ExternalArtifact fluxSource
	// last read stands for (externalArtifact): a path in it is read below it.
	artifactPrefix string
	// artifactExcludes are its copies' exclude patterns.
	artifactExcludes []render.ArtifactExclude
	// unapplied says the object being read was found in a file that no target and no
	// cluster root of the repository applies, or in a directory only a target drift
	// did not follow names (found.deferred): drift does not know what applies it.
	unapplied bool
}

// targetsOf turns an applier object into targets: one for an Application,
// Kustomization or HelmRelease, one per generated Application for an ApplicationSet.
func (d *discovery) targetsOf(f found, budget int) []Target {
	d.near, d.pool.root = f.near, f.root
	d.unapplied = f.parent == "" && f.root == "" && f.built == "" || f.deferred
	var ts []Target
	switch f.obj.Get().GetKind() {
	case KindApplication:
		ts = []Target{d.application(f.obj.Get())}
	case KindApplicationSet:
		ts = d.applicationSet(f.obj.Get(), budget)
	case KindKustomization:
		ts = []Target{d.kustomization(f.obj.Get())}
	case KindHelmRelease:
		ts = []Target{d.helmRelease(f.obj.Get())}
	case KindFluxInstance:
		ts = d.fluxInstance(f.obj)
	case KindResourceSet:
		ts = []Target{d.resourceSet(f.obj)}
	}
	for i := range ts {
		if ts[i].From == "" {
			ts[i].From = f.from
		}
		if f.root != "" {
			// One cluster of a fleet: its name says which, and so do those of what it
			// depends on, which are the same cluster's.
			ts[i].Root, ts[i].Name = f.root, f.root+"/"+ts[i].Name
			for j, dep := range ts[i].DependsOn {
				ts[i].DependsOn[j] = f.root + "/" + dep
			}
		}
		ts[i].Parent = f.parent
		if f.obj.Source != "" && f.parent == "" {
			ts[i].Inputs = append(ts[i].Inputs, f.obj.Source)
		}
	}
	return ts
}

// add records a target; false when the same object was met before. Two different
// definitions of one object for one cluster make both refused.
func (d *discovery) add(t Target) bool {
	key := t.Name + "\x00" + t.Cluster
	i, seen := d.byName[key]
	if !seen {
		d.byName[key] = len(d.targets)
		d.targets = append(d.targets, t)
		return true
	}
	prev := &d.targets[i]
	if prev.definition == t.definition {
		// Written in a file and rendered by another target too (a Flux cluster's
		// directory, which its flux-system Kustomization builds): that target applies it.
		if prev.Parent == "" && t.Parent != "" && t.Parent != t.Name {
			if prev.namespaceUnknown {
				// Skipped for want of an applier, which this target names: read as it.
				inputs := prev.Inputs
				*prev = t
				prev.Inputs = append(slices.Clone(inputs), t.Inputs...)
			}
			prev.Parent = t.Parent
		}
		return false
	}
	if prev.Refused == "" || !strings.Contains(prev.Refused, "is defined more than once") {
		prev.Refused = fmt.Sprintf("%s %s is defined more than once for %s, differently: at %s", t.Kind, objectName(t.Namespace, t.ObjectName), clusterName(t.Cluster), prev.From)
		prev.RefusedReason = reason.Duplicate
	}
	prev.Refused += " and at " + t.From
	prev.Skipped = ""
	return false
}

// askAhead asks, without waiting, for the renderings the Flux Kustomizations,
// HelmReleases and Applications waiting in queue would read for their children, as
// each would be defined now: discovery follows the queue one object at a time, and
// the render workers meanwhile render what comes next, side by side, into the
// run's cache. Nothing it finds is kept: each object is read again in its turn, when
// what the objects before it rendered is known, and a rendering asked for ahead
// that its turn does not ask for is only work lost.
func (d *discovery) askAhead(ctx context.Context, queue []found) {
	near, root, unapplied, secrets := d.near, d.pool.root, d.unapplied, len(d.secrets)
	var specs []render.Spec
	for i := range queue {
		if queue[i].asked {
			continue
		}
		queue[i].asked = true
		switch queue[i].obj.Get().GetKind() {
		case KindKustomization, KindHelmRelease, KindApplication:
		default:
			continue // an expansion (ApplicationSet) or a generated source: in its turn
		}
		for _, t := range d.targetsOf(queue[i], 1) {
			if t.Skipped != "" || t.Refused != "" {
				continue
			}
			for _, spec := range t.Specs {
				if d.mayDefine(spec) {
					specs = append(specs, spec)
				}
			}
		}
	}
	d.near, d.pool.root, d.unapplied, d.secrets = near, root, unapplied, d.secrets[:secrets]
	for _, spec := range specs {
		d.ahead.Go(func() {
			if ctx.Err() == nil {
				_, _ = d.opts.Render(spec)
			}
		})
	}
}

// prefetch renders the specs whose objects children reads, side by side, through
// the run's cache, which renders each spec once: an ApplicationSet's thousand
// Applications render together, not one after the other.
func (d *discovery) prefetch(ctx context.Context, ts []Target) {
	var specs []render.Spec
	for _, t := range ts {
		if t.Skipped != "" || t.Refused != "" {
			continue
		}
		for _, spec := range t.Specs {
			if d.mayDefine(spec) {
				specs = append(specs, spec)
			}
		}
	}
	if len(specs) < 2 {
		return
	}
	// All asked for at once: the run's renderer bounds its workers and renders what
	// waits in batches (render/worker.Pool).
	var wg sync.WaitGroup
	for _, spec := range specs {
		wg.Go(func() {
			if ctx.Err() == nil {
				_, _ = d.opts.Render(spec) // kept by the cache for children
			}
		})
	}
	wg.Wait()
}

// mayDefine reports whether rendering spec may give an Argo CD or Flux object. It
// may not when every file the rendering reads is the repository's own manifest (all
// of them searched as text) and none names their API groups: plain manifests, and
// kustomizations that neither inflate charts nor run generators or transformers,
// nor have Flux substitute variables into them. Any other rendering makes what its
// files do not say (so do patches and components an Application or Kustomization
// adds).
func (d *discovery) mayDefine(spec render.Spec) bool {
	dir := path.Clean(cmp.Or(spec.Path, "."))
	switch {
	case spec.Renderer == render.RendererPlain:
		return d.names(dir)
	case spec.Renderer != render.RendererKustomize || spec.Substitute != nil:
		return true
	case spec.Kustomize != nil && (len(spec.Kustomize.Patches) > 0 || len(spec.Kustomize.Components) > 0):
		return true // patches and components the defining object adds, not the files
	}
	if _, ok := d.layout.kustomizations[dir]; !ok {
		// Built over the kustomization Flux generates of its manifests, or failing.
		return d.names(dir) || !spec.AsFlux
	}
	return d.layout.opaqueWithin(dir) || slices.ContainsFunc(d.layout.closure(dir), func(f string) bool { return d.named[f] })
}

// names reports whether a file, or a file under a directory, names an Argo CD or
// Flux API group.
func (d *discovery) names(dir string) bool {
	if d.namedDirs == nil {
		d.namedDirs = map[string]bool{}
		for name, names := range d.named {
			for dir := name; names && !d.namedDirs[dir]; dir = path.Dir(dir) {
				d.namedDirs[dir] = true // the file, and each directory above it
				if dir == "." {
					break
				}
			}
		}
	}
	return d.namedDirs[dir]
}

// children are the applier objects a target renders.
func (d *discovery) children(t Target) []found {
	var out []found
	for _, spec := range t.Specs {
		if !d.mayDefine(spec) {
			continue
		}
		res, err := d.opts.Render(spec)
		if err != nil || res == nil {
			continue
		}
		d.pool.add(res.Objects)
		for _, o := range res.Objects {
			if isApplierObject(o.Get()) {
				out = append(out, found{obj: inDestination(o, t), near: res.Objects, from: "rendered by " + t.Name + " (" + o.Where() + ")", parent: t.Name})
			}
		}
	}
	return out
}

// inDestination is an object t renders as t's applier applies it: Argo CD and
// helm-controller put an object that names no namespace in the Application's
// destination namespace or the release's; kustomize-controller does not (a
// Kustomization's targetNamespace is already in its render).
func inDestination(o render.Object, t Target) render.Object {
	obj := o.Get()
	if obj.GetNamespace() != "" || t.DestNamespace == "" || (t.ArgoCD == nil && t.Kind != KindHelmRelease) {
		return o
	}
	c := o
	c.Obj = obj.DeepCopy()
	c.Obj.SetNamespace(t.DestNamespace)
	return c
}

// ordered sorts targets as they are applied: those defined in the repository's files
// first, then what each renders, by name within each level, each Flux object moved
// after those it depends on; the explanation of a conflict is finished here.
func ordered(ts []Target) []Target {
	for i := range ts {
		if strings.Contains(ts[i].Refused, "is defined more than once") {
			ts[i].Refused += ": each place is another cluster's? Run drift on one cluster's directory (--path, with --context), or name the clusters in drift.yaml's clusters map"
		}
	}
	depth := map[string]int{}
	parent := map[string]string{}
	for _, t := range ts {
		parent[t.Name] = t.Parent
	}
	for _, t := range ts {
		for p := t.Parent; p != "" && depth[t.Name] < len(ts); p = parent[p] {
			depth[t.Name]++
		}
	}
	sort.SliceStable(ts, func(i, j int) bool {
		if depth[ts[i].Name] != depth[ts[j].Name] {
			return depth[ts[i].Name] < depth[ts[j].Name]
		}
		return ts[i].Name < ts[j].Name
	})
	index := map[string]int{}
	for i, t := range ts {
		index[t.Name] = i
	}
	var out []Target
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(i int)
	visit = func(i int) {
		t := ts[i]
		if state[t.Name] != 0 {
			return
		}
		state[t.Name] = 1
		for _, dep := range t.DependsOn {
			if j, ok := index[dep]; ok && state[dep] == 0 {
				visit(j)
			}
		}
		state[t.Name] = 2
		out = append(out, t)
	}
	for i := range ts {
		visit(i)
	}
	return out
}

// isApplierObject reports whether obj is an object discovery reads.
func isApplierObject(obj *unstructured.Unstructured) bool {
	group := strings.SplitN(obj.GetAPIVersion(), "/", 2)[0]
	switch obj.GetKind() {
	case KindApplication, KindApplicationSet:
		return group == "argoproj.io"
	case KindKustomization:
		return group == "kustomize.toolkit.fluxcd.io"
	case KindHelmRelease:
		return group == "helm.toolkit.fluxcd.io"
	case KindFluxInstance, KindResourceSet:
		return group == "fluxcd.controlplane.io"
	}
	return false
}

// scanned is what candidates found beside which files name a group: the files an
// earlier run decoded and found inert (ScanInert), and the content id of each file
// read now (so that discovery can remember one inert once decoded).
type scanned struct {
	inert map[string]bool
	ids   map[string]string
}

// candidates are the manifest files under paths, true for those that name an Argo CD
// or Flux API group, read as text so that a repository without any is not decoded
// twice. A chart's files are
// templates, never applied as written: what they define is found by rendering the
// chart.
func candidates(fsys fs.FS, paths []string, charts chartDirs, scans Scans, read *scanned) (map[string]bool, error) {
	hasher, _ := fsys.(blobHasher)
	if hasher == nil {
		scans = nil // the work tree: read every file
	}
	if len(paths) == 0 {
		paths = []string{""}
	}
	out := map[string]bool{}
	for _, p := range paths {
		root := strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if root == "" {
			root = "."
		}
		if _, err := fs.Stat(fsys, root); errors.Is(err, fs.ErrNotExist) {
			continue // a path the ref does not hold (one a change removes): nothing here
		}
		err := fs.WalkDir(fsys, root, func(name string, e fs.DirEntry, err error) error {
			if err != nil {
				// A directory that cannot be read (a submodule) is the render's to
				// report: its files are not the repository's to discover.
				if e != nil && e.IsDir() && name != root {
					return fs.SkipDir
				}
				return err
			}
			if e.IsDir() {
				if name != root && strings.HasPrefix(e.Name(), ".") {
					return fs.SkipDir
				}
				return nil
			}
			switch path.Ext(name) {
			case ".yaml", ".yml", ".json":
			default:
				return nil
			}
			if charts.inChart(name) {
				return nil
			}
			var id string
			if scans != nil {
				if id, err = hasher.BlobHash(name); err == nil {
					if s, ok := scans.Scanned(id); ok {
						if s != ScanUnread {
							out[name] = s == ScanNames
							read.inert[name] = s == ScanInert
						}
						return nil
					}
				}
			}
			remember := func(s Scan) {
				if id != "" {
					scans.Remember(id, s)
					read.ids[name] = id
				}
			}
			if info, err := e.Info(); err != nil || info.Size() > render.DefaultMaxFileBytes {
				if err == nil {
					remember(ScanUnread)
				}
				return nil // the render says what is wrong with it
			}
			data, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil // the render says what is wrong with it
			}
			out[name] = namesApplierGroup(data) || spellsApplierGroup(data)
			remember(map[bool]Scan{true: ScanNames, false: ScanPlain}[out[name]])
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// applierGroups are Argo CD's and Flux's API groups, as an apiVersion begins (and
// source-watcher's, whose ArtifactGenerators make the sources Kustomizations read).
var applierGroups = []string{"argoproj.io/", "kustomize.toolkit.fluxcd.io/", "helm.toolkit.fluxcd.io/", "fluxcd.controlplane.io/", "source.extensions.fluxcd.io/"}

// namesApplierGroup reports whether a file mentions Argo CD's or Flux's API groups.
func namesApplierGroup(data []byte) bool {
	for _, g := range applierGroups {
		if bytes.Contains(data, []byte(g)) {
			return true
		}
	}
	return false
}

// spellsApplierGroup reports whether a file that does not name Argo CD's or Flux's API
// groups as text spells one otherwise: with escapes in a quoted string ("argoproj\x2eio/",
// "\u002e", "\/", a line break escaped inside the group) or in UTF-16 or UTF-32, each of
// which the YAML and JSON decoders of drift and of the controllers read as the group.
// Only such a file is decoded, document by document, and every key and string
// searched; a document that does not decode, or is larger than a renderer reads
// (render.DefaultMaxDocumentBytes, which also bounds what decoding it holds in drift's
// own process), defines nothing any renderer reads.
func spellsApplierGroup(data []byte) bool {
	if !escapesGroupCharacter(data) && bytes.IndexByte(data, 0) < 0 && !bytes.HasPrefix(data, []byte{0xfe, 0xff}) && !bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
		return false // nothing is spelled but as written
	}
	for _, doc := range render.SplitDocuments(data) {
		if len(doc) > render.DefaultMaxDocumentBytes {
			continue
		}
		// As YAML, then as JSON that YAML does not read (a tab where YAML wants spaces).
		if anyDocumentHoldsApplierGroup(yaml.NewDecoder(bytes.NewReader(doc)).Decode) ||
			anyDocumentHoldsApplierGroup(json.NewDecoder(bytes.NewReader(doc)).Decode) {
			return true
		}
	}
	return false
}

// anyDocumentHoldsApplierGroup reports whether a document decode reads, up to the
// first it cannot, holds Argo CD's or Flux's API groups.
func anyDocumentHoldsApplierGroup(decode func(any) error) bool {
	for {
		var doc any
		if decode(&doc) != nil {
			return false
		}
		if holdsApplierGroup(doc) {
			return true
		}
	}
}

// escapesGroupCharacter reports whether data holds an escape that stands for a
// character an API group is written with (a lowercase letter, "." or "/": "\x2e",
// "\u0061", "\U0000002f", "\/") or an escaped line break, which joins two lines of a
// quoted string. Other escapes ("\"", "\n", "\u003c" as Go's JSON encoder writes "<")
// cannot make a group, and a file full of them (a dashboard's JSON) is not decoded.
func escapesGroupCharacter(data []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(data[i:], '\\')
		if j < 0 || i+j+1 >= len(data) {
			return false
		}
		i += j
		n := 0
		switch data[i+1] {
		case '/', '\n', '\r':
			return true
		case '\\':
			i++ // an escaped backslash: what follows it is text
			continue
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		}
		if n > 0 && i+2+n <= len(data) {
			if c, err := strconv.ParseUint(string(data[i+2:i+2+n]), 16, 32); err == nil && (c == '.' || c == '/' || ('a' <= c && c <= 'z')) {
				return true
			}
		}
	}
}

// holdsApplierGroup reports whether a decoded document holds Argo CD's or Flux's API
// groups in a key or a string.
func holdsApplierGroup(v any) bool {
	switch v := v.(type) {
	case string:
		return namesApplierGroup([]byte(v))
	case map[string]any:
		for k, e := range v {
			if holdsApplierGroup(k) || holdsApplierGroup(e) {
				return true
			}
		}
	case map[any]any:
		for k, e := range v {
			if holdsApplierGroup(k) || holdsApplierGroup(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if holdsApplierGroup(e) {
				return true
			}
		}
	}
	return false
}

// objectName is namespace/name, or name for a cluster-scoped or unnamespaced object.
func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// clusterName names a cluster key in messages.
func clusterName(key string) string {
	if key == "" {
		return "the cluster drift runs against"
	}
	return "cluster " + key
}

// chartDirs tells whether a file is part of a Helm chart (a directory above it holds
// Chart.yaml).
type chartDirs struct {
	fsys  fs.FS
	known map[string]bool
}

func (c chartDirs) inChart(file string) bool {
	dir := path.Dir(file)
	if dir == "." {
		return false
	}
	if v, ok := c.known[dir]; ok {
		return v
	}
	_, err := fs.Stat(c.fsys, path.Join(dir, "Chart.yaml"))
	v := err == nil || c.inChart(dir)
	c.known[dir] = v
	return v
}

// uniqueSorted is a list without repeats, in order.
func uniqueSorted(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
