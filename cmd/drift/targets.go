package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/source"
)

// target is one target of the run, with drift.yaml's defaults and the command line
// already applied.
type target struct {
	name         string
	spec         render.Spec
	namespace    string // "" means the cluster's default
	cluster      clusterKey
	fieldManager string
	// ownManager: fieldManager is the target's own or --field-manager, not a default.
	ownManager bool
	rules      report.Rules
	// entry is the drift.yaml entry, to tell whether it changed since --base.
	entry *config.Target
	// dryRunAggregated lets objects of aggregated APIs be sent.
	dryRunAggregated bool
	// applier names the profile of what applies the target for real.
	applier string
	// flux and argocd name the Kustomization or Application that applies it.
	flux   *config.FluxTarget
	argocd *config.ArgoCDTarget
	// applySet names an ApplySet parent the repository does not render.
	applySet string
	// skipped says why the target is not diffed.
	skipped string
	// refused says why the target cannot be previewed (an error in the report).
	refused string
}

// clusterKey names the cluster a target deploys to.
type clusterKey struct {
	kubeconfig string
	context    string
}

func (k clusterKey) String() string {
	if k.context == "" {
		return "the current context"
	}
	return "context " + k.context
}

// loadedConfig is drift.yaml as the run uses it.
type loadedConfig struct {
	// cfg is what the run uses (nil: no drift.yaml); on a pull request, the change's
	// targets with the trusted part from the base.
	cfg *config.Config
	// base is the base's own drift.yaml (nil when there is none or no --base).
	base *config.Config
	// refused names targets that cannot be previewed, with why.
	refused map[string]string
	// change is the file on both sides, for the report, when they differ.
	change *report.ConfigInput
}

// loadConfig reads drift.yaml (or --config). On a pull request (--base) what decides
// how objects are checked comes from the base ref, unless --config-from head says the
// run is trusted; a --config file outside the repository is the runner's and trusted
// whole.
func (o *diffOptions) loadConfig(repo *source.Repo, head, base *source.Snapshot) (*loadedConfig, error) {
	name := config.FileName
	if o.Config != "" {
		inRepo, err := repo.Path(o.Config)
		if err != nil {
			data, err := os.ReadFile(o.Config)
			if err != nil {
				return nil, fmt.Errorf("--config: %w", err)
			}
			cfg, err := config.Parse(o.Config, data)
			return &loadedConfig{cfg: cfg, base: cfg}, err
		}
		name = inRepo
	}
	headData, headCfg, err := configIn(head, name)
	if err != nil {
		return nil, err
	}
	if base == nil {
		return &loadedConfig{cfg: headCfg}, nil
	}
	baseData, baseCfg, err := configIn(base, name)
	if o.ConfigFrom == configFromHead {
		if err != nil {
			// Only --base's selection uses the base's file here: every entry counts as changed.
			o.warnf("%v: every target counts as changed", err)
		}
		return &loadedConfig{cfg: headCfg, base: baseCfg}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: drift reads the rules and clusters of a pull request from its base; fix the file on the base branch (or, for a trusted local run, use --config-from head)", err)
	}
	lc := &loadedConfig{base: baseCfg}
	tr := config.Trusted(baseCfg, headCfg)
	lc.cfg, lc.refused = tr.Config, tr.Refused
	if string(baseData) != string(headData) || len(tr.NotApplied) > 0 {
		lc.change = &report.ConfigInput{File: name, TrustedFrom: o.Base, Base: string(baseData), Head: string(headData), NotApplied: tr.NotApplied}
	}
	return lc, nil
}

// configIn reads a configuration file from a snapshot; nil when it has none.
func configIn(snap *source.Snapshot, name string) ([]byte, *config.Config, error) {
	data, err := fs.ReadFile(snap.FS, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read %s in %s: %w", name, snap.Describe(), err)
	}
	cfg, err := config.Parse(name, data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", snap.Describe(), err)
	}
	return data, cfg, nil
}

// planTargets turns the configuration and the command line into targets: --path
// values when given (one target each), else drift.yaml's targets, else the directory
// drift runs in.
func (o *diffOptions) planTargets(repo *source.Repo, lc *loadedConfig, paths []string) []target {
	cfg := lc.cfg
	var global report.Rules
	var defaults config.Defaults
	if cfg != nil {
		global = report.Rules{Ignore: cfg.Ignore, Mask: cfg.Mask}
		defaults = cfg.Defaults
	}
	var out []target
	if len(o.Paths) > 0 || cfg == nil || len(cfg.Targets) == 0 {
		if len(paths) == 0 {
			paths = []string{repo.Dir}
		}
		for _, p := range paths {
			name := p
			if name == "" {
				name = "."
			}
			out = append(out, o.applyFlags(target{
				name: name, spec: render.Spec{Path: p},
				namespace: defaults.Namespace, fieldManager: defaults.FieldManager, applier: defaults.Applier,
				cluster: clusterKey{context: defaults.Context},
				rules:   global,
			}))
		}
		return out
	}
	for i := range cfg.Targets {
		ct := cfg.Targets[i]
		t := target{
			name:             ct.Name,
			spec:             render.Spec{Path: path.Clean(ct.Path), Renderer: ct.Renderer},
			namespace:        firstOf(ct.Namespace, defaults.Namespace),
			fieldManager:     firstOf(ct.FieldManager, defaults.FieldManager),
			ownManager:       ct.FieldManager != "",
			cluster:          clusterKey{context: firstOf(ct.Context, defaults.Context)},
			rules:            report.Rules{Ignore: append(append([]config.IgnoreRule{}, global.Ignore...), ct.Ignore...), Mask: append(append([]config.MaskRule{}, global.Mask...), ct.Mask...)},
			entry:            &ct,
			dryRunAggregated: ct.DryRunAggregatedAPIs,
			applier:          ct.ApplierOf(defaults),
			flux:             ct.Flux,
			argocd:           ct.ArgoCD,
			applySet:         ct.ApplySet,
			refused:          lc.refused[ct.Name],
		}
		if t.spec.Path == "." {
			t.spec.Path = ""
		}
		if ct.Helm != nil {
			t.spec.Helm = render.HelmOptions{
				ReleaseName:      ct.Helm.ReleaseName,
				ReleaseNamespace: ct.Helm.ReleaseNamespace,
				ValuesFiles:      ct.Helm.ValuesFiles,
				Values:           ct.Helm.Values,
			}
		}
		out = append(out, o.applyFlags(t))
	}
	return out
}

// applyFlags lets flags given on the command line override drift.yaml for every
// target, and fills in what neither says.
func (o *diffOptions) applyFlags(t target) target {
	if o.flagSet("applier") || o.flagSet("apply-mode") {
		t.applier = o.applierName()
	}
	if t.applier == "" {
		t.applier = dryrun.DefaultProfile
	}
	if o.flagSet("field-manager") {
		t.fieldManager, t.ownManager = o.FieldManager, true
	}
	p, err := dryrun.ProfileFor(t.applier)
	if err == nil {
		t.applier = p.Name // aliases (server, client) by their names
	}
	if err == nil && p.FixedManager {
		// A controller applies as itself: a default field manager is for the targets
		// that choose theirs, and the target's own must be the controller's.
		if t.ownManager && t.fieldManager != p.Manager && t.refused == "" {
			t.refused = fmt.Sprintf("field manager %s is not what %s applies with: it always applies as %s; remove fieldManager (or --field-manager) for this target", t.fieldManager, t.applier, p.Manager)
		}
		t.fieldManager = ""
	}
	if o.flagSet("context") {
		t.cluster.context = *o.kube.Context
	}
	if o.flagSet("kubeconfig") {
		t.cluster.kubeconfig = *o.kube.KubeConfig
	}
	if o.flagSet("namespace") {
		t.namespace = *o.kube.Namespace
	}
	if t.spec.Renderer == render.RendererHelm || t.spec.Renderer == "" {
		// A release needs a name; the chart directory's is stable from run to run.
		if t.spec.Helm.ReleaseName == "" {
			t.spec.Helm.ReleaseName = path.Base("/" + t.spec.Path)
			if t.spec.Helm.ReleaseName == "/" {
				t.spec.Helm.ReleaseName = "release"
			}
		}
	}
	return t
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// selectTargets marks the targets --target does not name as skipped. A pattern that
// names no target is an error listing the names there are.
func selectTargets(targets []target, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	used := make([]bool, len(patterns))
	for i := range targets {
		match := false
		for j, p := range patterns {
			if ok, _ := path.Match(p, targets[i].name); ok {
				match, used[j] = true, true
			}
		}
		if !match {
			targets[i].skipped = "not selected with --target"
		}
	}
	for j, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("--target %q is not a valid pattern: %w", p, err)
		}
		if !used[j] {
			names := make([]string, len(targets))
			for i, t := range targets {
				names[i] = t.name
			}
			sort.Strings(names)
			return fmt.Errorf("--target %q names no target; the targets are: %s", p, strings.Join(names, ", "))
		}
	}
	return nil
}

// entryChanged reports whether a target's drift.yaml entry is new or differs in the
// base.
func entryChanged(t target, base *config.Config) bool {
	if t.entry == nil {
		return false
	}
	if base == nil {
		return true
	}
	for _, bt := range base.Targets {
		if bt.Name == t.name {
			a, _ := json.Marshal(bt)
			b, _ := json.Marshal(*t.entry)
			return string(a) != string(b)
		}
	}
	return true
}

// selectChanged skips the targets whose inputs are the same in base and head: no
// file a target reads changed, and neither did its drift.yaml entry. Kustomize
// targets are rendered to learn what they read; a chart counts its whole directory
// and its values files; a plain target its directory.
func (o *diffOptions) selectChanged(targets []target, head, base *source.Snapshot, baseCfg *config.Config, cache *render.Cache) error {
	changed, err := source.Changed(base, head)
	if err != nil {
		return err
	}
	for i := range targets {
		t := &targets[i]
		if t.skipped != "" {
			continue
		}
		if entryChanged(*t, baseCfg) {
			continue
		}
		inputs := o.inputsOf(*t, head, cache)
		touched := false
		for _, p := range changed {
			if inputs.Touched(p) {
				touched = true
				break
			}
		}
		if !touched {
			t.skipped = "its inputs are unchanged since " + base.Describe()
		}
	}
	return nil
}

// inputsOf returns what a target's rendering depends on.
func (o *diffOptions) inputsOf(t target, head *source.Snapshot, cache *render.Cache) render.Inputs {
	renderer := t.spec.Renderer
	if renderer == "" {
		renderer = render.Detect(head.FS, t.spec.Path)
	}
	switch renderer {
	case render.RendererKustomize:
		spec := t.spec
		spec.Helm = render.HelmOptions{}
		res, err := cache.Render(snapshotKey(head), head.FS, spec)
		if err == nil && len(res.Failures) == 0 {
			return res.Inputs
		}
		// A failed build may not have read everything: count the whole directory too,
		// and whatever the failure claims (a worker that crashed claims the repository).
		in := render.Inputs{Trees: []string{t.spec.Path}}
		if err == nil {
			in.Files, in.Dirs = res.Inputs.Files, res.Inputs.Dirs
			in.Trees = append(in.Trees, res.Inputs.Trees...)
		}
		return in
	case render.RendererHelm:
		in := render.Inputs{Trees: []string{t.spec.Path}}
		for _, vf := range t.spec.Helm.ValuesFiles {
			in.Files = append(in.Files, path.Join(t.spec.Path, vf))
		}
		return in
	}
	return render.Inputs{Trees: []string{t.spec.Path}}
}
