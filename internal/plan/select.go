package plan

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// notSelected is why a target --target does not name is skipped.
const notSelected = "not selected with --target"

// SelectNamed marks the targets no pattern names as skipped (patterns are path.Match
// globs, as --target takes them). A pattern that names no target is an error listing
// the names there are.
func SelectNamed(targets []Target, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	used := make([]bool, len(patterns))
	for i := range targets {
		match := false
		for j, p := range patterns {
			if ok, _ := path.Match(p, targets[i].Name); ok {
				match, used[j] = true, true
			}
		}
		if !match {
			targets[i].Skipped = notSelected
		}
	}
	for j, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("--target %q is not a valid pattern: %w", p, err)
		}
		if !used[j] {
			names := make([]string, len(targets))
			for i, t := range targets {
				names[i] = t.Name
			}
			sort.Strings(names)
			return fmt.Errorf("--target %q names no target; the targets are: %s", p, strings.Join(names, ", "))
		}
	}
	return nil
}

// entryChanged reports whether a target's drift.yaml entry is new or differs in the
// base.
func entryChanged(t Target, base *config.Config) bool {
	if t.Entry == nil {
		return false
	}
	if base == nil {
		return true
	}
	for _, bt := range base.Targets {
		if bt.Name == t.Name {
			a, _ := json.Marshal(bt)
			b, _ := json.Marshal(*t.Entry)
			return string(a) != string(b)
		}
	}
	return true
}

// SelectChanged skips the targets whose inputs are the same in base and head: no
// file a target reads changed, and neither did its drift.yaml entry. Kustomize
// targets are rendered to learn what they read; a chart counts its whole directory
// and its values files; a plain target its directory.
func SelectChanged(targets []Target, head, base *source.Snapshot, baseCfg *config.Config, cache *render.Cache) error {
	changed, err := source.Changed(base, head)
	if err != nil {
		return err
	}
	for i := range targets {
		t := &targets[i]
		if t.Skipped != "" {
			// A target drift cannot preview that the change touches (its definition, or
			// a file it reads) must not read as nothing: it marks the report incomplete.
			t.NotPreviewed = !t.ByController && t.Skipped != notSelected && (t.DefinitionChanged || touches(changed, render.Inputs{Files: t.Definition}))
			continue
		}
		if entryChanged(*t, baseCfg) || t.DefinitionChanged {
			continue
		}
		if !touches(changed, InputsOf(*t, head, cache)) {
			t.Skipped = "its inputs are unchanged since " + base.Describe()
		}
	}
	return nil
}

// InputsOf returns what a target's rendering depends on: what each of its specs
// reads, and the files its discovered definition reads. (A discovered target whose
// definition differs from the base's counts as changed whatever it reads.)
func InputsOf(t Target, head *source.Snapshot, cache *render.Cache) render.Inputs {
	var in render.Inputs
	for _, spec := range append([]render.Spec{t.Spec}, t.More...) {
		tt := t
		tt.Spec = spec
		si := specInputs(tt, head, cache)
		in.Trees = append(in.Trees, si.Trees...)
		in.Files = append(in.Files, si.Files...)
		in.Dirs = append(in.Dirs, si.Dirs...)
	}
	in.Files = append(in.Files, t.Definition...)
	return in
}

// specInputs returns what rendering the target's Spec depends on.
func specInputs(t Target, head *source.Snapshot, cache *render.Cache) render.Inputs {
	spec := SpecFor(t, head.FS)
	switch spec.Renderer {
	case render.RendererKustomize:
		spec.Helm = render.HelmOptions{}
		res, err := cache.RenderSnapshot(head, spec)
		if err == nil && len(res.Failures) == 0 {
			return res.Inputs
		}
		// A failed build may not have read everything: count the whole directory too,
		// and whatever the failure claims (a worker that crashed claims the repository).
		in := render.Inputs{Trees: []string{t.Spec.Path}}
		if err == nil {
			in.Files, in.Dirs = res.Inputs.Files, res.Inputs.Dirs
			in.Trees = append(in.Trees, res.Inputs.Trees...)
		}
		return in
	case render.RendererHelm:
		in := render.Inputs{Trees: []string{t.Spec.Path}}
		if t.Spec.Helm.Chart != nil {
			in.Trees = nil // a fetched chart: its definition and values files count
		}
		for _, vf := range t.Spec.Helm.ValuesFiles {
			if !strings.HasPrefix(vf, render.ChartValuesPrefix) {
				in.Files = append(in.Files, path.Join(t.Spec.Path, vf))
			}
		}
		return in
	}
	return render.Inputs{Trees: []string{t.Spec.Path}}
}

// touches reports whether a changed path is one of inputs.
func touches(changed []string, inputs render.Inputs) bool {
	for _, p := range changed {
		if inputs.Touched(p) {
			return true
		}
	}
	return false
}

// SpecFor is the target's render spec with its renderer decided as its applier builds
// the path: detected when drift.yaml does not say, and for Flux (applier flux) a
// directory without a kustomization file built with kustomize, as Flux builds it, and
// any kustomization without kustomize's load restrictions (render.KustomizeAsFlux).
func SpecFor(t Target, fsys fs.FS) render.Spec {
	spec := t.Spec
	if spec.Renderer == "" {
		spec.Renderer = render.Detect(fsys, spec.Path)
		if t.Applier == "flux" && spec.Renderer == render.RendererPlain && isDir(fsys, spec.Path) {
			spec.Renderer = render.RendererKustomize
		}
	}
	spec.AsFlux = t.Applier == "flux" && spec.Renderer == render.RendererKustomize
	return spec
}

// isDir reports whether p is a directory of fsys ("" the root).
func isDir(fsys fs.FS, p string) bool {
	if p == "" {
		p = "."
	}
	info, err := fs.Stat(fsys, p)
	return err == nil && info.IsDir()
}
