package plan

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/discover"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// discovers reports whether the run reads its targets from the repository's Argo CD
// and Flux objects: always without drift.yaml, and when drift.yaml says discover.
func discovers(cfg *Config) bool {
	return cfg == nil || cfg.Use == nil || cfg.Use.Discover
}

// Discover finds the Argo CD and Flux objects under paths (none: the whole
// repository) of the head and what they render, within the request's bounds.
func Discover(ctx context.Context, repo *source.Repo, p *Plan, base string, paths []string, b discoverBounds) (*discover.Result, error) {
	urls := repo.RemoteURLs()
	revisions := Revisions(repo, p.Head, p.Ref, b.branches)
	var clusters []appset.Cluster
	var sources []*unstructured.Unstructured
	if base != "" && p.Base != nil {
		// A source following the base branch deploys what the change merges into it.
		revisions = append(revisions, Revisions(repo, p.Base, base, nil)...)
	}
	if p.Config != nil && p.Config.Use != nil {
		urls = append(urls, p.Config.Use.RepoURLs...)
		for _, c := range p.Config.Use.ArgoCDClusters {
			clusters = append(clusters, appset.Cluster{Name: c.Name, Server: c.Server, Project: c.Project, Labels: c.Labels, Annotations: c.Annotations})
		}
		for _, src := range p.Config.Use.FluxSources {
			u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(src)}
			if u.GetNamespace() == "" {
				u.SetNamespace("flux-system")
			}
			sources = append(sources, u)
		}
	}
	return discover.Discover(ctx, p.Head.FS, discover.Options{
		Paths: paths, RepoURLs: urls, Revisions: revisions, MaxTargets: b.maxTargets,
		LiveClusters: b.liveClusters, Clusters: clusters, LiveObject: b.liveObject, Sources: sources, Scanned: b.scans, Roots: b.roots,
		Render: func(spec render.Spec) (*render.Result, error) { return p.Cache.RenderSnapshot(p.Head, spec) },
		Expand: func(req appset.Request, what string) (*appset.Result, error) {
			return p.Cache.Expand(p.Head.Commit, p.Head.FS, req, what)
		},
	})
}

// discoverBounds are what a run tells discovery beside the repository: how many
// targets it may make, the branches the run stands for, and the live cluster's Argo
// CD cluster Secrets (nil: none).
type discoverBounds struct {
	maxTargets   int
	branches     []string
	liveClusters func(namespace string) ([]appset.Cluster, error)
	liveObject   func(kind, namespace, name string) (*unstructured.Unstructured, error)
	scans        discover.Scans
	// roots are the fleet's cluster roots to discover with (nil: those found).
	roots []string
}

// Revisions are the branch names a snapshot of ref stands for, which an Argo CD or
// Flux source following one of them renders from: the branches the run is told
// (--branch, or what a CI system says the run previews), the branch ref names, the
// branches whose tip the snapshot's commit is, and, when the run is told none, the
// default branch, into which a local run previews a change to merge.
func Revisions(repo *source.Repo, snap *source.Snapshot, ref string, branches []string) []string {
	out := append(append([]string{}, branches...), repo.Branches(ref)...)
	out = append(out, repo.BranchesAt(snap.Commit)...)
	if b := repo.DefaultBranchName(); b != "" && len(branches) == 0 {
		out = append(out, b)
	}
	return out
}

// Discovered turns the discovered targets into the run's, with drift.yaml's
// defaults, clusters and rules, and the entries of drift.yaml that name a discovered
// target (without a path) setting its fields; withConfig adds drift.yaml's targets
// that have a path.
//
// base, on a pull request, is the base's discovery: each target's base render is
// the base's definition of it, and with TrustIgnores its ignore rules are the base's,
// so that a change cannot hide what it does by ignoring it.
func Discovered(cfg *Config, found *discover.Result, withConfig bool, base *Baseline, ov Overrides, appliers *applier.Registry) ([]Target, error) {
	c := &config.Config{}
	if cfg != nil && cfg.Use != nil {
		c = cfg.Use
	}
	global := config.Rules{Ignore: c.Ignore, Mask: c.Mask}
	entries := map[string]*config.Target{}
	var out []Target
	if withConfig {
		for i := range c.Targets {
			if c.Targets[i].Path == "" {
				entries[c.Targets[i].Name] = &c.Targets[i]
			}
		}
		for _, t := range Targets(cfg, "", nil, ov, appliers) {
			if t.Entry != nil && t.Entry.Path != "" {
				out = append(out, t)
			}
		}
	}
	names := map[string]bool{}
	for _, t := range out {
		names[t.Name] = true
	}
	for _, dt := range found.Targets {
		if names[dt.Name] {
			return nil, fmt.Errorf("%s: target %s is also an %s the repository defines (%s): rename the drift.yaml target, or remove its path to set fields of the discovered one", config.FileName, dt.Name, dt.Kind, dt.From)
		}
		names[dt.Name] = true
		var baseSpecs []render.Spec
		changed, isNew, lookup := false, false, dt.Applier == applier.Helm
		if base != nil {
			b, inBase := base.Targets[dt.Name]
			changed, isNew = !inBase || !sameDefinition(dt, b), !inBase
			if base.TrustIgnores {
				dt = withBaseChecks(dt, b, inBase)
			}
			baseSpecs = b.Specs
			// Helm's lookup reads the cluster only for a HelmRelease the base previews
			// with the helm applier: a pull request cannot give its templates access.
			lookup = inBase && b.Applier == applier.Helm && dt.Applier == applier.Helm
			if !lookup && dt.Applier == applier.Helm {
				dt.Notes = append(dt.Notes, "lookup finds nothing in this target's templates (as in helm template): the base does not define this HelmRelease, and a pull request cannot give templates read access to the cluster")
			}
		}
		t := fromDiscovered(dt, c, global)
		fleetCluster(&t, c, ov)
		t.BaseSpecs, t.DefinitionChanged, t.New, t.Lookup = baseSpecs, changed, isNew, lookup
		name := dt.Applier
		if e := entries[dt.Name]; e != nil {
			t, name = withEntry(t, name, e)
			if r := cfg.refused(dt.Name); r != "" && t.Refused == "" {
				t.Refused, t.RefusedReason = r, reason.Config
			}
			delete(entries, dt.Name)
		}
		out = append(out, ov.apply(t, name, appliers))
	}
	if len(entries) > 0 {
		var unknown, known []string
		for name := range entries {
			unknown = append(unknown, name)
		}
		for _, dt := range found.Targets {
			known = append(known, dt.Name)
		}
		sort.Strings(unknown)
		return nil, fmt.Errorf("%s: target %s has no path and names no discovered target; the discovered targets are: %s", config.FileName, strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return out, nil
}

// withBaseChecks makes how a discovered target is checked the base's, for a pull
// request: the applier (and so whether Helm's lookup reads the cluster) and the
// ignore rules of the base's definition of it, or for a target the change adds, none
// of its own ignore rules. What the target renders stays the change's.
func withBaseChecks(dt, b discover.Target, inBase bool) discover.Target {
	if !inBase {
		if len(dt.Ignore) > 0 {
			dt.Ignore = nil
			dt.Notes = append(dt.Notes, "the change's ignoreDifferences are not applied: a pull request cannot ignore what it adds")
		}
		return dt
	}
	if !sameRules(dt.Ignore, b.Ignore) {
		dt.Ignore = b.Ignore
		dt.Notes = append(dt.Notes, "the change's ignoreDifferences are not applied: a pull request cannot ignore what it changes, so the base's are used")
	}
	if dt.Applier != b.Applier && b.Applier != "" {
		dt.Notes = append(dt.Notes, fmt.Sprintf("previewed as %s applies it, as the base defines it: the change's %s is applied once merged", b.Applier, dt.Applier))
		dt.Applier = b.Applier
	}
	return dt
}

// refused says why drift.yaml refuses a target ("" it does not).
func (c *Config) refused(name string) string {
	if c == nil {
		return ""
	}
	return c.Refused[name]
}

// fromDiscovered is a discovered target as the run's, its applier to be decided.
func fromDiscovered(dt discover.Target, c *config.Config, global config.Rules) Target {
	t := Target{
		Name: dt.Name, Namespace: dt.DestNamespace, ArgoCD: dt.ArgoCD, Flux: dt.Flux,
		FieldManager: dt.FieldManager, OwnManager: dt.FieldManager != "",
		From: dt.From, Parent: dt.Parent, Definition: dt.Inputs, Unconfirmed: dt.Unconfirmed, CreateNamespace: dt.CreateNamespace, Notes: dt.Notes,
		Skipped: dt.Skipped, Skip: discoveredSkip(dt), Refused: dt.Refused, RefusedReason: dt.RefusedReason, ControllerPrune: &dt.Prune,
		Rules: config.Rules{Ignore: append(append([]config.IgnoreRule{}, global.Ignore...), dt.Ignore...), Mask: global.Mask},
	}
	if len(dt.Specs) > 0 {
		t.Spec, t.More = dt.Specs[0], dt.Specs[1:]
	}
	switch ctx, ok := c.Clusters[dt.Cluster]; {
	case dt.Cluster == "" && dt.Root != "":
		// One cluster of a fleet: its own server, or the context drift.yaml maps its
		// root to (fleetCluster).
		t.Cluster.Root = dt.Root
		if ctx, ok := c.Clusters[dt.Root]; ok {
			t.Cluster.Context = ctx
		}
	case dt.Cluster == "":
		t.Cluster.Context = c.Defaults.Context
	case ok:
		t.Cluster.Context = ctx
	case t.Refused == "" && t.Skipped == "":
		t.Refused = fmt.Sprintf("%s %s deploys to cluster %s, which drift.yaml's clusters map does not name: add clusters: {%q: <kube context>} to drift.yaml on the base branch",
			dt.Kind, dt.ObjectName, dt.Cluster, dt.Cluster)
		t.RefusedReason = reason.Config
	}
	return t
}

// fleetCluster refuses a target of a fleet's cluster root that drift.yaml maps to
// no context, on a run against live clusters: previewing it on the current context
// would compare one cluster's objects with another's. Without live clusters
// (Overrides.Clusterless) each root is previewed on a server of its own; --context
// sends every root to the context it names.
func fleetCluster(t *Target, c *config.Config, ov Overrides) {
	root := t.Cluster.Root
	if root == "" || ov.Clusterless || ov.Context != nil || t.Refused != "" || t.Skipped != "" {
		return
	}
	if _, ok := c.Clusters[root]; ok {
		return
	}
	t.Refused = fmt.Sprintf("%s is in %s, one cluster of the repository's fleet, which drift.yaml's clusters map does not name: add clusters: {%q: <kube context>} to drift.yaml on the base branch, or preview the fleet with --cluster ephemeral",
		t.Name, root, root)
	t.RefusedReason = reason.Config
}

// discoveredSkip is what kind of reason discovery skips dt for.
func discoveredSkip(dt discover.Target) SkipReason {
	switch {
	case dt.Skipped == "":
		return NotSkipped
	case dt.ByController:
		return SkipController
	}
	return SkipUnsupported
}

// withEntry sets a discovered target's fields from the drift.yaml entry that names
// it: its cluster, field manager, applier (name, the discovered one, unless the entry
// names another), applier options, rules and namespace.
func withEntry(t Target, name applier.Name, e *config.Target) (Target, applier.Name) {
	t.Entry = e
	if e.Context != "" {
		t.Cluster.Context = e.Context
	}
	if e.FieldManager != "" {
		t.FieldManager, t.OwnManager = e.FieldManager, true
	}
	if a := e.ApplierOf(config.Defaults{}); a != "" {
		name = a
	}
	if e.ArgoCD != nil {
		a := *e.ArgoCD
		if t.ArgoCD != nil {
			a.Application = cmp.Or(a.Application, t.ArgoCD.Application)
			a.Namespace = cmp.Or(a.Namespace, t.ArgoCD.Namespace)
		}
		t.ArgoCD = &a
	}
	if e.Flux != nil {
		t.Flux = e.Flux
	}
	if e.Namespace != "" {
		t.Namespace = e.Namespace
	}
	if name == applier.Helm && e.ApplierOf(config.Defaults{}) == applier.Helm {
		t.Lookup = true // the trusted entry's choice
	}
	t.DryRunAggregated = e.DryRunAggregatedAPIs
	t.ApplySet = e.ApplySet
	t.Rules.Ignore = append(t.Rules.Ignore, e.Ignore...)
	t.Rules.Mask = append(t.Rules.Mask, e.Mask...)
	return t, name
}

// Baseline is the base's discovery, for a pull request.
type Baseline struct {
	// Targets are the base's discovered targets, by name.
	Targets map[string]discover.Target
	// TrustIgnores takes each target's ignore rules from the base.
	TrustIgnores bool
	secrets      []string
	// roots are the cluster roots the base's discovery used.
	roots []string
}

// discoverBase discovers the base.
func discoverBase(ctx context.Context, repo *source.Repo, p *Plan, base string, paths []string, bounds discoverBounds) (*Baseline, error) {
	bp := &Plan{Ref: base, Head: p.Base, Config: p.Config, Cache: p.Cache}
	found, err := Discover(ctx, repo, bp, "", paths, bounds)
	if err != nil {
		return nil, fmt.Errorf("--base: %w", err)
	}
	b := &Baseline{Targets: map[string]discover.Target{}, secrets: found.Secrets, roots: found.Roots}
	for _, t := range found.Targets {
		b.Targets[t.Name] = t
	}
	return b, nil
}

// sameDefinition reports whether a discovered target is defined the same in the
// base: what it renders, where and how it is applied.
func sameDefinition(head, base discover.Target) bool {
	def := func(t discover.Target) string {
		b, _ := json.Marshal([]any{t.Specs, t.DestNamespace, t.Cluster, t.Applier, t.ArgoCD, t.Flux, t.CreateNamespace, t.Ignore, t.Prune, t.Skipped, t.Refused})
		return string(b)
	}
	return def(head) == def(base)
}

func sameRules(a, b []config.IgnoreRule) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb) || (len(a) == 0 && len(b) == 0)
}
