// Package plan turns drift.yaml, the paths asked for and the command line's overrides
// into the run's targets, and selects the ones to preview: by name (--target) and by
// what a pull request changed (--base).
package plan

import (
	"cmp"
	"fmt"
	"path"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// Target is one target of the run, with drift.yaml's defaults and the overrides
// already applied.
type Target struct {
	Name      string
	Spec      render.Spec
	Namespace string // "" means the cluster's default
	Cluster   ClusterKey
	// FieldManager is the manager to preview with ("": the applier's own);
	// OwnManager says it is the target's own or an override, not a default.
	FieldManager string
	OwnManager   bool
	Rules        config.Rules
	// Entry is the drift.yaml entry, to tell whether it changed since the base.
	Entry *config.Target
	// DryRunAggregated lets objects of aggregated APIs be sent.
	DryRunAggregated bool
	// Applier is what applies the target for real, decided here once (Overrides,
	// drift.yaml, discovery, the default), from the run's registry.
	Applier applier.Applier
	// Flux and ArgoCD name the Kustomization or Application that applies it.
	Flux   *config.FluxTarget
	ArgoCD *config.ArgoCDTarget
	// ApplySet names an ApplySet parent the repository does not render.
	ApplySet string
	// More are further sources rendered beside Spec (an Argo CD Application with
	// several sources), in order.
	More []render.Spec
	// BaseSpecs are what the base renders for a discovered target, as the base
	// defines it (a chart version the change bumps); nil: the target's own specs.
	BaseSpecs []render.Spec
	// From says where a discovered target is defined ("" for drift.yaml's and paths'):
	// "apps/guestbook.yaml document 1", "rendered by Application/root (...)".
	From string
	// Parent is the discovered target whose render defines this one ("" none).
	Parent string
	// Definition are the repository files a discovered target's definition reads (its
	// own file, values and substitution sources).
	Definition []string
	// Reads are the files the change touches that the target reads (SelectChanged).
	Reads []string
	// Unconfirmed are the paths a skipped discovered target would read if its source
	// is this repository (discover.Target.Unconfirmed): a change to them makes it
	// not previewed.
	Unconfirmed []string
	// DefinitionChanged says a discovered target is new since the base, or defined
	// differently there (what it renders, where, how): it counts as changed.
	DefinitionChanged bool
	// New says the change adds the target: the base defines no target of its name.
	// Everything it renders is the change's, never drift already in the cluster.
	New bool
	// Lookup says the target's Helm templates may read its cluster through `lookup`
	// (the helm applier, as helm upgrade renders), which only the trusted side grants:
	// the runner's --applier, drift.yaml's applier read from the base, or the base's
	// own definition of a discovered HelmRelease. Without it lookup finds nothing, as
	// in helm template.
	Lookup bool
	// CreateNamespace is the namespace the applier creates when it is missing ("" none).
	CreateNamespace string
	// ControllerPrune says whether the Flux Kustomization or Argo CD Application that
	// applies a discovered target deletes what it no longer applies (nil: unknown,
	// read from the cluster).
	ControllerPrune *bool
	// Notes say what drift does differently from the applier, or leaves out.
	Notes []string
	// Bare says the target is a path drift previews on its own (the directory it
	// runs in, or --path), which no drift.yaml entry nor Argo CD or Flux object
	// defines: what is below it is rendered as it would be applied (splitBare).
	Bare bool
	// Skipped says why the target is not previewed, and Skip what kind of reason it
	// is (its controller does not apply it, it is not selected...).
	Skipped string
	Skip    SkipReason
	// NotPreviewed marks a target the change touches that is skipped for another
	// reason than its controller's (another repository, a generator drift does not
	// expand): the report is then incomplete.
	NotPreviewed bool
	// Refused says why the target cannot be previewed (an error in the report), and
	// RefusedReason that error's reason ("": reason.Refused).
	Refused       string
	RefusedReason reason.Reason
}

// ClusterKey names the cluster a target deploys to.
type ClusterKey struct {
	Kubeconfig string
	Context    string
	// Root is the cluster root of a fleet the target belongs to (discover.Target.Root;
	// "": none): each root is a cluster of its own, an ephemeral server each.
	Root string
}

func (k ClusterKey) String() string {
	where := "the current context"
	if k.Context != "" {
		where = "context " + k.Context
	}
	if k.Root != "" {
		return "cluster " + k.Root + " (" + where + ")"
	}
	return where
}

// Overrides are what the command line sets for every target; nil or "" leaves
// drift.yaml's value.
type Overrides struct {
	// Applier replaces every target's applier ("": drift.yaml's or discovery's).
	Applier      applier.Name
	FieldManager *string
	Context      *string
	Kubeconfig   *string
	Namespace    *string
	// Clusterless says the run has no live cluster (--cluster ephemeral, drift
	// targets): each cluster root of a fleet is previewed on a server of its own.
	Clusterless bool
}

// Targets turns the configuration and the paths into targets: one per path when
// paths were asked for, else drift.yaml's targets, else root (the directory drift
// runs in); each target's applier comes from appliers.
func Targets(cfg *Config, root string, paths []string, ov Overrides, appliers *applier.Registry) []Target {
	var global config.Rules
	var defaults config.Defaults
	var c *config.Config
	if cfg != nil {
		c = cfg.Use
	}
	if c != nil {
		global = config.Rules{Ignore: c.Ignore, Mask: c.Mask}
		defaults = c.Defaults
	}
	var out []Target
	if len(paths) > 0 || c == nil || len(c.Targets) == 0 {
		if len(paths) == 0 {
			paths = []string{root}
		}
		for _, p := range paths {
			name := cmp.Or(p, ".")
			out = append(out, ov.apply(Target{
				Name: name, Spec: render.Spec{Path: p}, Bare: true,
				Namespace: defaults.Namespace, FieldManager: defaults.FieldManager,
				Cluster: ClusterKey{Context: defaults.Context},
				Rules:   global, Lookup: defaults.Applier == applier.Helm,
			}, defaults.Applier, appliers))
		}
		return out
	}
	for i := range c.Targets {
		ct := c.Targets[i]
		t := Target{
			Name:             ct.Name,
			Namespace:        cmp.Or(ct.Namespace, defaults.Namespace),
			FieldManager:     cmp.Or(ct.FieldManager, defaults.FieldManager),
			OwnManager:       ct.FieldManager != "",
			Cluster:          ClusterKey{Context: cmp.Or(ct.Context, defaults.Context)},
			Rules:            config.Rules{Ignore: append(append([]config.IgnoreRule{}, global.Ignore...), ct.Ignore...), Mask: append(append([]config.MaskRule{}, global.Mask...), ct.Mask...)},
			Entry:            &ct,
			DryRunAggregated: ct.DryRunAggregatedAPIs,
			Flux:             ct.Flux,
			ArgoCD:           ct.ArgoCD,
			ApplySet:         ct.ApplySet,
			Refused:          cfg.Refused[ct.Name],
			RefusedReason:    reason.Config,
		}
		if ct.Path == "" && t.Refused == "" {
			// Without discovery it would render the whole repository.
			t.Refused = fmt.Sprintf("target %s has no path, which only sets the fields of a discovered Argo CD or Flux object, and drift.yaml does not discover them (discover: true, on the base branch for a pull request)", ct.Name)
		}
		t.Spec = specOf(ct)
		name := ct.ApplierOf(defaults)
		t.Lookup = name == applier.Helm // drift.yaml's choice, from the trusted side
		out = append(out, ov.apply(t, name, appliers))
	}
	return out
}

// specOf is what a drift.yaml target renders.
func specOf(ct config.Target) render.Spec {
	spec := render.Spec{Path: path.Clean(ct.Path), Renderer: ct.Renderer}
	if spec.Path == "." {
		spec.Path = ""
	}
	if ct.Helm != nil {
		spec.Helm = render.HelmOptions{
			ReleaseName:      ct.Helm.ReleaseName,
			ReleaseNamespace: ct.Helm.ReleaseNamespace,
			ValuesFiles:      ct.Helm.ValuesFiles,
			Values:           ct.Helm.Values,
		}
	}
	return spec
}

// apply lets the overrides replace drift.yaml's values, decides the target's applier
// (name, which the overrides replace, or the default) from appliers, and fills in
// what neither says.
func (ov Overrides) apply(t Target, name applier.Name, appliers *applier.Registry) Target {
	if ov.Applier != "" {
		name = ov.Applier
		t.Lookup = true // the runner's choice
	}
	name = name.OrDefault()
	if ov.FieldManager != nil {
		t.FieldManager, t.OwnManager = *ov.FieldManager, true
	}
	t.Applier = appliers.Get(name)
	if t.Applier == nil {
		panic(fmt.Sprintf("plan: the run's appliers have no %s", name))
	}
	if !t.Applier.Traits().UpgradesRelease {
		t.Lookup = false
	}
	if s := t.Applier.Sending(); s.ManagerFixed {
		// A controller applies as itself: a default field manager is for the targets
		// that choose theirs, and the target's own must be the controller's.
		if t.OwnManager && t.FieldManager != s.Manager && t.Refused == "" {
			t.Refused = fmt.Sprintf("field manager %s is not what %s applies with: it always applies as %s; remove fieldManager (or --field-manager) for this target", t.FieldManager, name, s.Manager)
			t.RefusedReason = reason.Config
		}
		t.FieldManager = ""
	}
	if ov.Context != nil {
		t.Cluster.Context = *ov.Context
	}
	if ov.Kubeconfig != nil {
		t.Cluster.Kubeconfig = *ov.Kubeconfig
	}
	if ov.Namespace != nil {
		t.Namespace = *ov.Namespace
	}
	t.Spec = withReleaseName(t.Spec)
	return t
}

// withReleaseName names the release of a chart that does not name it: a release needs
// a name, and the chart directory's is stable from run to run.
func withReleaseName(spec render.Spec) render.Spec {
	if (spec.Renderer == render.RendererHelm || spec.Renderer == "") && spec.Helm.ReleaseName == "" {
		spec.Helm.ReleaseName = path.Base("/" + spec.Path)
		if spec.Helm.ReleaseName == "/" {
			spec.Helm.ReleaseName = "release"
		}
	}
	return spec
}
