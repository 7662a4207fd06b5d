package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// The fields of a target by who may set them on a pull request: Trusted copies the
// trusted ones from the base. A new key of drift.yaml must be added to one of these
// lists (a test checks it).
var (
	renderedTargetFields = []string{"Name", "Path", "Renderer", "Namespace", "Helm"}
	trustedTargetFields  = []string{"Context", "FieldManager", "ApplySet", "Applier", "ApplyMode", "Flux", "ArgoCD", "DryRunAggregatedAPIs", "Ignore", "Mask"}
)

// Trust is the outcome of reading a pull request's drift.yaml against the trusted one.
type Trust struct {
	// Config is what the run uses: the change's targets and what they render, with
	// everything that decides how objects are checked taken from the trusted side.
	Config *Config
	// NotApplied lists, in words, what the change's drift.yaml says that the run does
	// not use because only the trusted side may say it.
	NotApplied []string
	// Refused maps a target's name to why it cannot be previewed (a cluster the trusted
	// side does not name).
	Refused map[string]string
}

// Trusted merges a pull request's drift.yaml (head) into the trusted one (base, read
// from the base ref). The head decides what is rendered: which targets there are, their
// paths, renderers, namespaces and Helm options. The base decides how objects are
// checked: noise rules (ignore, mask), clusters (contexts, and the contexts discovered
// objects' clusters map to), field managers, apply modes, ApplySets, aggregated APIs
// the URLs this repository is known by, the chart repositories drift may fetch
// from, the risk rules, the policy (failOn), the paths that deploy nothing (deploysNothing) and whether the repository's Argo CD and
// Flux objects are discovered (which decides their appliers). A target the base does
// not know takes the base's defaults for those, and may use only a context the base
// already names; an entry without a path (which sets the fields of a discovered
// target) that the base does not have sets none of them. Either side may be nil (no
// drift.yaml there): a base without one discovers, and a change that deletes it keeps
// the base's rules.
func Trusted(base, head *Config) Trust {
	tr := Trust{Refused: map[string]string{}}
	if head == nil {
		if base == nil {
			return tr
		}
		head = &Config{}
	}
	discovers := base == nil || base.Discover
	if base == nil {
		base = &Config{}
	}
	out := &Config{
		Version:        head.Version,
		Defaults:       Defaults{Context: base.Defaults.Context, FieldManager: base.Defaults.FieldManager, Applier: base.Defaults.Applier, Namespace: head.Defaults.Namespace},
		Ignore:         base.Ignore,
		Mask:           base.Mask,
		Ephemeral:      base.Ephemeral,
		Discover:       discovers,
		Clusters:       base.Clusters,
		ArgoCDClusters: base.ArgoCDClusters,
		FluxSources:    base.FluxSources,
		RepoURLs:       base.RepoURLs,
		Charts:         base.Charts,
		Risks:          base.Risks,
		FailOn:         base.FailOn,
		DeploysNothing: base.DeploysNothing,
	}
	note := func(format string, args ...any) { tr.NotApplied = append(tr.NotApplied, fmt.Sprintf(format, args...)) }
	if !same(base.Ignore, head.Ignore) {
		note("the top-level ignore rules")
	}
	if !same(base.Mask, head.Mask) {
		note("the top-level mask rules")
	}
	if !same(base.Ephemeral, head.Ephemeral) {
		note("ephemeral.crds")
	}
	if !same(base.Clusters, head.Clusters) {
		note("clusters")
	}
	if !same(base.RepoURLs, head.RepoURLs) {
		note("repoURLs")
	}
	if !same(base.ArgoCDClusters, head.ArgoCDClusters) {
		note("argocdClusters")
	}
	if !same(base.FluxSources, head.FluxSources) {
		note("fluxSources")
	}
	if !same(base.Charts, head.Charts) {
		note("charts.allow")
	}
	if !same(base.Risks, head.Risks) {
		note("risks")
	}
	if !same(base.FailOn, head.FailOn) {
		note("failOn")
	}
	if !same(base.DeploysNothing, head.DeploysNothing) {
		note("deploysNothing")
	}
	if head.Discover != discovers && head.Discover {
		note("discover")
	}
	if base.Defaults.Context != head.Defaults.Context {
		note("defaults.context")
	}
	if base.Defaults.FieldManager != head.Defaults.FieldManager {
		note("defaults.fieldManager")
	}
	if base.Defaults.Applier != head.Defaults.Applier {
		note("defaults.applier")
	}
	contexts := map[string]bool{"": true, base.Defaults.Context: true}
	baseTargets := map[string]Target{}
	for _, t := range base.Targets {
		baseTargets[t.Name] = t
		contexts[t.Context] = true
	}
	for _, h := range head.Targets {
		b, known := baseTargets[h.Name]
		t := h
		tv, bv, hv := reflect.ValueOf(&t).Elem(), reflect.ValueOf(b), reflect.ValueOf(h)
		for _, f := range trustedTargetFields {
			tv.FieldByName(f).Set(bv.FieldByName(f))
		}
		switch {
		case !known && h.Path == "":
			// It sets fields of a discovered target, which the base defines: as the
			// base does not set them, they stay as the base's discovery has them.
		case !known:
			// A new target may pick among the clusters the base already previews.
			t.Context = h.Context
			if !contexts[h.Context] {
				tr.Refused[h.Name] = fmt.Sprintf("the change's %s gives target %s the context %q, which the base's %s does not name: "+
					"a pull request cannot add a cluster to preview against; merge the %s change first (or, for a trusted local run, use --config-from head)",
					FileName, h.Name, h.Context, FileName, FileName)
			}
		}
		var differs []string
		for _, f := range trustedTargetFields {
			if !same(tv.FieldByName(f).Interface(), hv.FieldByName(f).Interface()) {
				differs = append(differs, keyOf(f))
			}
		}
		if len(differs) > 0 {
			note("target %s: %s", h.Name, strings.Join(differs, ", "))
		}
		out.Targets = append(out.Targets, t)
	}
	tr.Config = out
	return tr
}

// keyOf is a Target field's drift.yaml key, as notes name it.
func keyOf(field string) string {
	f, _ := reflect.TypeOf(Target{}).FieldByName(field)
	key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	switch key {
	case "ignore", "mask":
		return key + " rules"
	}
	return key
}

// same compares two values by their JSON, treating nil and empty alike.
func same(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	norm := func(s []byte) string {
		if string(s) == "null" {
			return "[]"
		}
		return string(s)
	}
	return norm(ja) == norm(jb)
}
