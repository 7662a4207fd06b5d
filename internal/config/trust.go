package config

import (
	"encoding/json"
	"fmt"
	"strings"
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
// checked: noise rules (ignore, mask), clusters (contexts), field managers, apply modes,
// ApplySets and aggregated APIs. A target the base does not know takes the base's
// defaults for those, and may use only a context the base already names. Either side
// may be nil (no drift.yaml there).
func Trusted(base, head *Config) Trust {
	tr := Trust{Refused: map[string]string{}}
	if head == nil {
		return tr
	}
	if base == nil {
		base = &Config{}
	}
	out := &Config{
		Version:  head.Version,
		Defaults: Defaults{Context: base.Defaults.Context, FieldManager: base.Defaults.FieldManager, Namespace: head.Defaults.Namespace},
		Ignore:   base.Ignore,
		Mask:     base.Mask,
	}
	note := func(format string, args ...any) { tr.NotApplied = append(tr.NotApplied, fmt.Sprintf(format, args...)) }
	if !same(base.Ignore, head.Ignore) {
		note("the top-level ignore rules")
	}
	if !same(base.Mask, head.Mask) {
		note("the top-level mask rules")
	}
	if base.Defaults.Context != head.Defaults.Context {
		note("defaults.context")
	}
	if base.Defaults.FieldManager != head.Defaults.FieldManager {
		note("defaults.fieldManager")
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
		t.Context, t.FieldManager, t.ApplySet, t.ApplyMode = b.Context, b.FieldManager, b.ApplySet, b.ApplyMode
		t.DryRunAggregatedAPIs, t.Ignore, t.Mask = b.DryRunAggregatedAPIs, b.Ignore, b.Mask
		if !known {
			// A new target may pick among the clusters the base already previews.
			t.Context = h.Context
			if !contexts[h.Context] {
				tr.Refused[h.Name] = fmt.Sprintf("the change's %s gives target %s the context %q, which the base's %s does not name: "+
					"a pull request cannot add a cluster to preview against; merge the %s change first (or, for a trusted local run, use --config-from head)",
					FileName, h.Name, h.Context, FileName, FileName)
			}
		}
		var differs []string
		for _, f := range []struct {
			name string
			same bool
		}{
			{"context", t.Context == h.Context},
			{"fieldManager", t.FieldManager == h.FieldManager},
			{"applySet", t.ApplySet == h.ApplySet},
			{"applyMode", t.ApplyMode == h.ApplyMode},
			{"dryRunAggregatedAPIs", t.DryRunAggregatedAPIs == h.DryRunAggregatedAPIs},
			{"ignore rules", same(t.Ignore, h.Ignore)},
			{"mask rules", same(t.Mask, h.Mask)},
		} {
			if !f.same {
				differs = append(differs, f.name)
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
