package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/discover"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/source"
)

// Request is what a run asks to plan: the repository, the refs, drift.yaml and the
// selection, as the command line gives them.
type Request struct {
	// Repo is the opened git repository.
	Repo *source.Repo
	// Ref is the ref to preview ("" for the work tree); with DefaultRef, an empty Ref
	// is the remote's default branch instead (drift detect).
	Ref        string
	DefaultRef bool
	// Base is the ref the change is compared with ("" for none).
	Base string
	// Paths are directories or files to render, relative to Repo (none: drift.yaml's
	// targets, or Repo itself).
	Paths []string
	// Config says where drift.yaml is read from (File, From; BaseRef and Warnf are
	// filled in from the request).
	Config ConfigSource
	// Names select targets by name or glob (none: all).
	Names []string
	// Overrides are what the command line sets for every target.
	Overrides Overrides
	// Warnf reports what does not stop the run.
	Warnf func(format string, args ...any)
	// Cache is the run's render cache for Repo; the plan's Cache is it.
	Cache *rendercache.Cache
	// Charts returns what fetches charts from the repositories the trusted
	// configuration allows (nil: no chart is fetched).
	Charts func(allow []string) render.ChartFetcher
	// MaxTargets bounds the targets discovery makes (0: discover.DefaultMaxTargets).
	MaxTargets int
	// ArgoClusters reads the Argo CD cluster Secrets of a namespace from the cluster
	// key names, read-only, never their credentials (nil: drift has no live cluster:
	// an ephemeral run, drift targets).
	ArgoClusters func(ctx context.Context, key ClusterKey, namespace string) ([]appset.Cluster, error)
	// LiveObject reads a ConfigMap or Secret from the cluster key names, read-only
	// (nil, nil when it is not there); nil when drift has no live cluster.
	LiveObject func(ctx context.Context, key ClusterKey, kind, namespace, name string) (*unstructured.Unstructured, error)
	// Branches are the branches the run previews (--branch, or what CI says: a pull
	// request's base and head branches): sources following one render from the refs.
	Branches []string
	// Appliers are the appliers the run decides targets' appliers from
	// (internal/applier/appliers.All).
	Appliers *applier.Registry
	// Scans remembers what discovery read of the repository's files before (nil:
	// every file is read).
	Scans discover.Scans
}

// Plan is what a run previews: the snapshots, drift.yaml as the run reads it, the
// targets (selected by name and, with a base, by change) and the render cache.
type Plan struct {
	// Ref is the ref previewed (the default branch when the request asked for it).
	Ref        string
	Head, Base *source.Snapshot
	Config     *Config
	Targets    []Target
	Cache      *rendercache.Cache
	// Secrets are values of the repository's Secrets that discovered targets'
	// definitions read (substitution variables, Helm values): never to be shown.
	Secrets []string
	// DiscoveryFailures are files that look like Argo CD or Flux objects but cannot
	// be read.
	DiscoveryFailures []render.Failure
	// Coverage accounts for every file a pull request touches (nil without a base).
	Coverage []CoveredFile
	// scans is what discovery remembers of files it read (Request.Scans).
	scans discover.Scans
}

// Open opens the repository, the ref and the base, reads drift.yaml and plans the
// targets. When ctx ends (the run's --timeout, a signal) while it discovers or plans
// them, Open returns, beside the error, the plan of what it had found: its Targets,
// none of them previewed, and DiscoveryFailures saying where discovery stopped.
func Open(ctx context.Context, req Request) (*Plan, error) {
	repo := req.Repo
	p := &Plan{Ref: req.Ref, Cache: req.Cache}
	var err error
	if req.DefaultRef && p.Ref == "" {
		p.Ref = repo.DefaultBranch()
	}
	if p.Head, err = repo.Snapshot(p.Ref); err != nil {
		return nil, err
	}
	if req.Base != "" {
		if p.Base, err = repo.Snapshot(req.Base); err != nil {
			return nil, fmt.Errorf("--base: %w", err)
		}
	}
	paths, err := repoPaths(repo, req.Paths)
	if err != nil {
		return nil, err
	}
	for _, path := range paths {
		// A path the change removes is previewed from the base: the head renders
		// nothing of it.
		if err := p.Head.CheckPaths([]string{path}); err != nil && (p.Base == nil || p.Base.CheckPaths([]string{path}) != nil) {
			return nil, err
		}
	}
	src := req.Config
	src.BaseRef, src.Warnf = req.Base, req.Warnf
	if p.Config, err = LoadConfig(repo, p.Head, p.Base, src); err != nil {
		return nil, err
	}
	if len(req.Paths) == 0 {
		paths = nil // drift.yaml's targets, or the directory drift runs in
	}
	var files []source.FileChange
	if p.Base != nil {
		if files, err = source.Files(p.Base, p.Head); err != nil {
			return nil, err
		}
		// What a change does not touch renders the same in both refs: each target's
		// rendering in the base is its rendering in the head when nothing it read
		// changed, and is not made twice.
		p.Cache.Equivalent(p.Base.Commit, p.Head.Commit, changedPaths(files))
	}
	p.Cache.InputID = func(commit, path string, read source.Read) (string, bool) {
		for _, snap := range []*source.Snapshot{p.Head, p.Base} {
			if snap != nil && snap.Commit == commit && commit != "" {
				return snap.InputID(path, read)
			}
		}
		return "", false
	}
	p.scans = req.Scans
	if req.Charts != nil {
		var allow []string
		if c := p.Config.Use; c != nil && c.Charts != nil {
			allow = c.Charts.Allow
		}
		p.Cache.Charts = req.Charts(allow)
	}
	var found *discover.Result
	var base *Baseline
	// The base is discovered beside the head (it reads the base's files, the head's
	// renderings of what the change does not touch, and the cache's): its result is
	// used only when the head's discovery finds targets, and is waited for whatever
	// happens, so that nothing renders after Open returns.
	baseDone := func() (*Baseline, error) { return nil, nil }
	if discovers(p.Config) && p.Base != nil {
		baseCtx, cancelBase := context.WithCancel(ctx)
		type discovered struct {
			base *Baseline
			err  error
		}
		ch := make(chan discovered, 1)
		go func() {
			b, err := discoverBase(baseCtx, repo, p, req.Base, paths, req.bounds(baseCtx, p))
			ch <- discovered{b, err}
		}()
		var got *discovered
		baseDone = func() (*Baseline, error) {
			if got == nil {
				r := <-ch
				got = &r
			}
			return got.base, got.err
		}
		defer func() {
			cancelBase() // a discovery whose result is not wanted ends
			_, _ = baseDone()
		}()
	}
	if discovers(p.Config) {
		if found, err = Discover(ctx, repo, p, req.Base, paths, req.bounds(ctx, p)); err != nil {
			if found != nil && found.Interrupted {
				return p.cutShort(req, found, paths, err)
			}
			return nil, err
		}
		p.Secrets = found.Secrets
	}
	if found != nil && found.Found {
		if p.Base != nil {
			// A pull request's Applications cannot ignore what they change: their
			// ignoreDifferences come from the base, as drift.yaml's rules do; and the
			// base renders each target as the base defines it.
			if base, err = baseDone(); err != nil {
				if ctx.Err() != nil {
					return p.cutShort(req, found, paths, err)
				}
				return nil, err
			}
			if union := unionRoots(found.Roots, base.roots); union != nil {
				// A change that adds or removes a cluster root: both refs are discovered
				// with every root of either, so that a target keeps its name across them.
				if found, base, err = p.rediscover(ctx, repo, req, paths, found, base, union); err != nil {
					if ctx.Err() != nil && found != nil {
						return p.cutShort(req, found, paths, err)
					}
					return nil, err
				}
			}
			base.TrustIgnores = req.Config.From != ConfigFromHead
			p.Secrets = append(p.Secrets, base.secrets...)
		}
		if p.Targets, err = Discovered(p.Config, found, len(paths) == 0, base, req.Overrides, req.Appliers); err != nil {
			return nil, err
		}
		// A path asked for is previewed whatever it defines: when no discovered
		// target renders it (a Flux Kustomization's path does), it is a target too.
		if more := uncovered(paths, p.Targets); len(more) > 0 {
			for _, t := range Targets(p.Config, repo.Dir, more, req.Overrides, req.Appliers) {
				p.Targets = append(p.Targets, withoutCovered(t, p.Targets, p.Head))
			}
		}
		p.DiscoveryFailures = found.Failures
	} else {
		p.Targets = Targets(p.Config, repo.Dir, paths, req.Overrides, req.Appliers)
	}
	p.Targets = splitBare(p.Targets, p.Head)
	if p.Base != nil {
		baseDefinitions(p.Targets, p.Config.Base)
	}
	Resolve(p.Targets, p.Head, p.Base)
	if err := SelectNamed(p.Targets, req.Names); err != nil {
		return nil, err
	}
	if p.Base != nil {
		SelectChanged(p.Targets, files, p.Head, p.Base, p.Config.Base, p.Cache)
		var asked []string
		if len(req.Paths) > 0 {
			asked = paths
		}
		if ctx.Err() == nil {
			// A run that ended while planning reports what it planned, not previewed:
			// the base's renders coverage may read for removed files are not started.
			p.Coverage = p.coverage(files, base, asked)
		}
	}
	if ctx.Err() != nil {
		// What was planned as the run ended is reported, each target not previewed.
		return p, fmt.Errorf("planning interrupted: %w", context.Cause(ctx))
	}
	// Planned: what the preview reads, render workers read for themselves.
	repo.Forget()
	return p, nil
}

// cutShort is the plan of a discovery the run's end (its deadline, a signal) cut
// short: the targets found until then, as the head defines them, and where discovery
// stopped among its failures; returned with err, the interruption.
func (p *Plan) cutShort(req Request, found *discover.Result, paths []string, err error) (*Plan, error) {
	p.Secrets = found.Secrets
	p.DiscoveryFailures = found.Failures
	targets, derr := Discovered(p.Config, found, len(paths) == 0, nil, req.Overrides, req.Appliers)
	if derr != nil {
		return nil, err
	}
	p.Targets = targets
	return p, err
}

// unionRoots are the cluster roots of both refs when they differ (nil: the same).
func unionRoots(head, base []string) []string {
	if slices.Equal(head, base) {
		return nil
	}
	union := slices.Concat(head, base)
	slices.Sort(union)
	return slices.Compact(union)
}

// rediscover discovers again, with the cluster roots union, the refs whose
// discovery used others.
func (p *Plan) rediscover(ctx context.Context, repo *source.Repo, req Request, paths []string, found *discover.Result, base *Baseline, union []string) (*discover.Result, *Baseline, error) {
	bounds := req.bounds(ctx, p)
	bounds.roots = union
	var err error
	if !slices.Equal(found.Roots, union) {
		if found, err = Discover(ctx, repo, p, req.Base, paths, bounds); err != nil {
			return found, nil, err
		}
		p.Secrets = found.Secrets
	}
	if !slices.Equal(base.roots, union) {
		if base, err = discoverBase(ctx, repo, p, req.Base, paths, bounds); err != nil {
			return found, nil, err
		}
	}
	return found, base, nil
}

// repoPaths turns paths relative to the directory the repository was opened from into
// repository paths (that directory itself when there are none).
func repoPaths(repo *source.Repo, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return []string{repo.Dir}, nil
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		rp, err := repo.Path(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rp)
	}
	return out, nil
}

// baseDefinitions marks drift.yaml's targets the base does not define as new, and
// gives a target the base defines otherwise (another path, renderer or Helm options)
// the base's definition to render the base with: only what the base's own definition
// renders can be drift already in the cluster.
func baseDefinitions(targets []Target, base *config.Config) {
	for i := range targets {
		t := &targets[i]
		if t.Entry == nil || t.Entry.Path == "" {
			continue // a path of the command line, or a discovered target (Discovered)
		}
		var b *config.Target
		if base != nil {
			for j := range base.Targets {
				if base.Targets[j].Name == t.Name && base.Targets[j].Path != "" {
					b = &base.Targets[j]
				}
			}
		}
		if b == nil {
			t.New = true
			continue
		}
		if bs := withReleaseName(specOf(*b)); !sameSpec(bs, withReleaseName(specOf(*t.Entry))) {
			t.BaseSpecs = []render.Spec{bs}
		}
	}
}

// sameSpec reports whether two render specs are the same.
func sameSpec(a, b render.Spec) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// bounds are what discovery is told of the run: its bounds, branches, and how it
// reads the live cluster.
func (req Request) bounds(ctx context.Context, p *Plan) discoverBounds {
	b := discoverBounds{maxTargets: req.MaxTargets, branches: req.Branches, liveClusters: req.clusters(ctx, p), scans: p.scans}
	if req.LiveObject != nil {
		key := req.defaultCluster(p)
		b.liveObject = func(kind, ns, name string) (*unstructured.Unstructured, error) {
			return req.LiveObject(ctx, key, kind, ns, name)
		}
	}
	return b
}

// defaultCluster is the cluster drift runs against (Argo CD's in-cluster, Flux's own
// cluster): drift.yaml's default context, or --context.
func (req Request) defaultCluster(p *Plan) ClusterKey {
	key := ClusterKey{}
	if c := p.Config.Use; c != nil {
		key.Context = c.Defaults.Context
	}
	if ov := req.Overrides; ov.Context != nil {
		key.Context = *ov.Context
	}
	if ov := req.Overrides; ov.Kubeconfig != nil {
		key.Kubeconfig = *ov.Kubeconfig
	}
	return key
}

// clusters reads the live cluster Secrets of the cluster drift runs against, once
// per namespace; nil without a live cluster.
func (req Request) clusters(ctx context.Context, p *Plan) func(string) ([]appset.Cluster, error) {
	if req.ArgoClusters == nil {
		return nil
	}
	key := req.defaultCluster(p)
	type read struct {
		clusters []appset.Cluster
		err      error
	}
	cache := map[string]read{}
	return func(ns string) ([]appset.Cluster, error) {
		if r, ok := cache[ns]; ok {
			return r.clusters, r.err
		}
		cs, err := req.ArgoClusters(ctx, key, ns)
		cache[ns] = read{cs, err}
		return cs, err
	}
}

// withoutCovered leaves out of a plain path target the directories below it that
// discovered targets render (a Flux Kustomization's path), which their targets
// preview as their applier applies them.
func withoutCovered(t Target, targets []Target, head *source.Snapshot) Target {
	if render.Detect(head.FS, t.Spec.Path) != render.RendererPlain {
		return t
	}
	var below []string
	for _, o := range targets {
		for _, spec := range append([]render.Spec{o.Spec}, o.More...) {
			rel := strings.TrimPrefix(path.Clean("/"+spec.Path), path.Clean("/"+t.Spec.Path)+"/")
			if spec.Helm.Chart == nil && spec.Renderer != render.RendererResourceSet && rel != path.Clean("/"+spec.Path) && rel != "" {
				below = append(below, rel+"/*")
			}
		}
	}
	if len(below) == 0 {
		return t
	}
	sort.Strings(below)
	excludeBelow(&t, below)
	t.Notes = append(t.Notes, "what discovered targets under it render is theirs to preview: "+strings.Join(slices.Compact(below), ", "))
	return t
}

// uncovered are the paths no target renders as one of its specs (none: nil).
func uncovered(paths []string, targets []Target) []string {
	var out []string
	for _, p := range paths {
		covered := false
		for _, t := range targets {
			for _, spec := range append([]render.Spec{t.Spec}, t.More...) {
				if spec.Helm.Chart == nil && path.Clean("/"+spec.Path) == path.Clean("/"+p) && t.Skipped == "" && t.Refused == "" {
					covered = true
				}
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}
