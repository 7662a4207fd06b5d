package controllercrds

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Install is what a repository says about a controller release that installs on a
// cluster: a FluxInstance (flux-operator installs Flux), or a Helm release of
// flux-operator's or Argo CD's chart (a HelmRelease or an Argo CD Application).
type Install struct {
	// Release is flux, flux-operator or argo-cd.
	Release string
	// By names the object: "FluxInstance flux-system/flux".
	By string
	// Asks is the version it asks for: a FluxInstance's spec.distribution.version,
	// flux-operator's chart version; "" when it names none or not the controller's.
	Asks string
	// Chart is the chart and version a Helm install names ("argo-cd 8.1.0").
	Chart string
	// Components are a FluxInstance's controllers (its defaults when it lists none).
	Components []string
	// Namespace is where a FluxInstance installs Flux (its own namespace).
	Namespace string
}

// fluxInstanceDefaults are the controllers a FluxInstance installs when it lists none
// (flux-operator's FluxInstance.GetComponents).
var fluxInstanceDefaults = []string{"source-controller", "kustomize-controller", "helm-controller", "notification-controller"}

// Installs reads what obj says about a controller it installs; nil for any other object.
func Installs(obj *unstructured.Unstructured) *Install {
	gk := obj.GroupVersionKind().GroupKind()
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	by := gk.Kind + " " + name
	switch gk {
	case schema.GroupKind{Group: "fluxcd.controlplane.io", Kind: "FluxInstance"}:
		in := &Install{Release: "flux", By: by, Namespace: cmp.Or(obj.GetNamespace(), "flux-system")}
		in.Asks, _, _ = unstructured.NestedString(obj.Object, "spec", "distribution", "version")
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "components")
		for _, c := range list {
			if s, ok := c.(string); ok {
				in.Components = append(in.Components, s)
			}
		}
		if len(in.Components) == 0 {
			in.Components = fluxInstanceDefaults
		}
		return in
	case schema.GroupKind{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}:
		chart, _, _ := unstructured.NestedString(obj.Object, "spec", "chart", "spec", "chart")
		version, _, _ := unstructured.NestedString(obj.Object, "spec", "chart", "spec", "version")
		return chartInstall(by, chart, version)
	case schema.GroupKind{Group: "argoproj.io", Kind: "Application"}:
		sources, _, _ := unstructured.NestedSlice(obj.Object, "spec", "sources")
		if src, ok, _ := unstructured.NestedMap(obj.Object, "spec", "source"); ok {
			sources = append(sources, src)
		}
		for _, s := range sources {
			src, _ := s.(map[string]any)
			chart, _ := src["chart"].(string)
			version, _ := src["targetRevision"].(string)
			if in := chartInstall(by, chart, version); in != nil {
				return in
			}
		}
	}
	return nil
}

// chartInstall is the install a Helm release of chart names: flux-operator's chart
// (its version is the operator's), Argo CD's or the community Flux chart.
func chartInstall(by, chart, version string) *Install {
	chart = chart[strings.LastIndex(chart, "/")+1:]
	release := map[string]string{"flux-operator": "flux-operator", "argo-cd": "argo-cd", "flux2": "flux"}[chart]
	if release == "" {
		return nil
	}
	in := &Install{Release: release, By: by, Chart: strings.TrimSpace(chart + " " + version)}
	if release == "flux-operator" {
		in.Asks = version
	}
	return in
}

// Serving is what one ephemeral server is given of drift's CRDs, and why.
type Serving struct {
	installs []*Install
	// served are the kinds a shipped CRD serves there; left, the shipped kinds the
	// repository's FluxInstances do not install.
	served map[schema.GroupKind]*CRD
	left   map[schema.GroupKind]bool
	// argo are the namespaces the Argo CD objects drift's CRDs serve are in: Argo CD
	// runs there, installed outside the repository.
	argo map[string]string
}

// Add reads what objs (what a ref renders for the server's targets) install and use,
// and returns drift's CRDs for the kinds they use that the server does not serve yet:
// has tells, by CRD name, whether the repository, drift.yaml or --crds-from-context
// already gave it one. Of Flux's kinds, only those of the controllers the repository's
// FluxInstances install are served when it has any.
//
// trusted says objs are the ones that decide how the server is checked (the base's,
// or the head's when there is no base): only from them are the namespaces a
// controller runs in taken to exist (Namespaces), so a pull request cannot make one.
func (s *Serving) Add(objs []*unstructured.Unstructured, trusted bool, has func(name string) bool) ([]*unstructured.Unstructured, error) {
	if s.served == nil {
		s.served, s.left, s.argo = map[schema.GroupKind]*CRD{}, map[schema.GroupKind]bool{}, map[string]string{}
	}
	defer func() {
		for _, obj := range objs {
			if !trusted {
				break
			}
			gk := obj.GroupVersionKind().GroupKind()
			if crd := s.served[gk]; crd != nil && crd.Release.Name == "argo-cd" && obj.GetNamespace() != "" && s.argo[obj.GetNamespace()] == "" {
				s.argo[obj.GetNamespace()] = fmt.Sprintf("%s %s/%s lives there, where Argo CD (installed outside the repository) runs", gk.Kind, obj.GetNamespace(), obj.GetName())
			}
		}
	}()
	// A later ref's (the head's) object replaces the earlier one's of the same name.
	for _, obj := range objs {
		in := Installs(obj)
		if in == nil {
			continue
		}
		if i := slices.IndexFunc(s.installs, func(o *Install) bool { return o.By == in.By }); i >= 0 {
			if !trusted {
				in.Namespace = s.installs[i].Namespace
			}
			s.installs[i] = in
		} else {
			if !trusted {
				in.Namespace = ""
			}
			s.installs = append(s.installs, in)
		}
	}
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		if s.served[gk] != nil || s.left[gk] {
			continue
		}
		crd, err := For(gk)
		if err != nil {
			return nil, err
		}
		if crd == nil || has(crd.Object.GetName()) {
			continue
		}
		if crd.Release.Name == "flux" && !s.installsComponent(crd.Component.Name) {
			s.left[gk] = true
			continue
		}
		s.served[gk] = crd
		out = append(out, crd.Object.DeepCopy())
	}
	return out, nil
}

// Namespaces are, by namespace, why the cluster has it whether or not the repository
// renders it: a FluxInstance installs Flux there, or an Argo CD object whose kind
// drift's CRDs serve lives there.
func (s *Serving) Namespaces() map[string]string {
	out := map[string]string{}
	for _, in := range s.installs {
		if in.Namespace != "" && out[in.Namespace] == "" {
			out[in.Namespace] = in.By + " installs Flux there"
		}
	}
	for ns, why := range s.argo {
		if out[ns] == "" {
			out[ns] = why
		}
	}
	return out
}

// installsComponent tells whether the repository's FluxInstances (any, if it has none)
// install the Flux controller named.
func (s *Serving) installsComponent(name string) bool {
	found := false
	for _, in := range s.installs {
		if in.Release == "flux" && in.Components != nil {
			found = true
			if slices.Contains(in.Components, name) {
				return true
			}
		}
	}
	return !found
}

// Notes say, for what a target renders, which of its kinds drift's CRDs serve and on
// what grounds, and which of Flux's kinds the repository's FluxInstances do not install.
func (s *Serving) Notes(objs []*unstructured.Unstructured) []string {
	byRelease := map[*Release][]string{}
	var left []string
	seen := map[schema.GroupKind]bool{}
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		if seen[gk] {
			continue
		}
		seen[gk] = true
		if crd := s.served[gk]; crd != nil {
			byRelease[crd.Release] = append(byRelease[crd.Release], gk.Kind)
		} else if s.left[gk] {
			left = append(left, gk.Kind)
		}
	}
	var notes []string
	for rel, kinds := range byRelease {
		sort.Strings(kinds)
		notes = append(notes, fmt.Sprintf("the ephemeral server serves %s with drift's copy of %s's CustomResourceDefinitions: %s",
			strings.Join(kinds, ", "), rel.Title(), s.why(rel)))
	}
	if len(left) > 0 {
		sort.Strings(left)
		var by []string
		for _, in := range s.installs {
			if in.Release == "flux" && in.Components != nil {
				by = append(by, fmt.Sprintf("%s installs %s", in.By, strings.Join(in.Components, ", ")))
			}
		}
		notes = append(notes, fmt.Sprintf("the ephemeral server does not serve %s: %s, not the controller of that kind", strings.Join(left, ", "), strings.Join(by, "; ")))
	}
	sort.Strings(notes)
	return notes
}

// why says what the repository says about the release drift's CRDs stand in for.
func (s *Serving) why(rel *Release) string {
	var says []string
	for _, in := range s.installs {
		if in.Release != rel.Name {
			continue
		}
		switch {
		case in.Asks != "" && !satisfies(in.Asks, rel.Version):
			says = append(says, fmt.Sprintf("%s asks for %q, which %s is not, so the objects are checked against %s's schemas", in.By, in.Asks, rel.Version, rel.Version))
		case in.Asks != "":
			says = append(says, fmt.Sprintf("%s installs %q", in.By, in.Asks))
		case in.Chart != "":
			says = append(says, fmt.Sprintf("%s installs chart %s", in.By, in.Chart))
		default:
			says = append(says, in.By+" installs it")
		}
	}
	if len(says) == 0 {
		return "the repository does not define them nor say which release installs them (give the cluster's own with --crds-from-context or ephemeral.crds)"
	}
	sort.Strings(says)
	return "the repository does not define them; " + strings.Join(says, "; ")
}

// satisfies tells whether version meets a semver constraint ("2.x", "~2.7", "2.9.5");
// a constraint that does not parse is taken as met.
func satisfies(constraint, version string) bool {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return true
	}
	v, err := semver.NewVersion(version)
	return err != nil || c.Check(v)
}
