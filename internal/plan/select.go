package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/source"
)

// SkipReason is what kind of reason a target is not previewed for (Target.Skipped
// says it in words).
type SkipReason string

const (
	// NotSkipped: the target is previewed.
	NotSkipped SkipReason = ""
	// SkipNotSelected: --target does not name it.
	SkipNotSelected SkipReason = "not-selected"
	// SkipUnchanged: none of its inputs changed since the base.
	SkipUnchanged SkipReason = "unchanged"
	// SkipController: its controller does not apply it (suspended, its
	// reconciliation disabled, it generates nothing), not that drift cannot preview it.
	SkipController SkipReason = "controller"
	// SkipUnsupported: drift cannot preview it (a source of another repository, a
	// generator drift does not expand).
	SkipUnsupported SkipReason = "unsupported"
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
			targets[i].Skipped, targets[i].Skip = notSelected, SkipNotSelected
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
// and its values files; a plain target its directory. Each target's Reads are the
// changed files it reads, which the coverage of the change is made of (Coverage).
func SelectChanged(targets []Target, files []source.FileChange, head, base *source.Snapshot, baseCfg *config.Config, cache *rendercache.Cache) {
	changed := changedPaths(files)
	for i := range targets {
		t := &targets[i]
		if t.Skipped != "" {
			// A target drift does not preview reads what it would render, unrendered:
			// its definition, the paths its specs and unconfirmed source name.
			in := definitionInputs(t.Definition, t.Unconfirmed)
			for _, spec := range append([]render.Spec{t.Spec}, t.More...) {
				if spec.Path != "" || spec.Renderer != "" {
					in.Trees = append(in.Trees, cmp.Or(spec.Path, "."))
				}
			}
			t.Reads = touched(changed, in)
			// A target drift cannot preview that the change touches (its definition, or
			// a file it reads) must not read as nothing: it marks the report incomplete.
			t.NotPreviewed = t.Skip != SkipController && t.Skip != SkipNotSelected &&
				(t.DefinitionChanged || len(touched(changed, definitionInputs(t.Definition, t.Unconfirmed))) > 0)
			continue
		}
		t.Reads = touched(changed, InputsOf(*t, head, cache))
		if entryChanged(*t, baseCfg) || t.DefinitionChanged {
			continue
		}
		if len(t.Reads) == 0 {
			t.Skipped, t.Skip = "its inputs are unchanged since "+base.Describe(), SkipUnchanged
		}
	}
}

// changedPaths are the paths the change touches: each file's, and a renamed file's
// base path too.
func changedPaths(files []source.FileChange) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
		if f.From != "" {
			out = append(out, f.From)
		}
	}
	return out
}

// InputsOf returns what a target's rendering depends on: what each of its specs
// reads, and the files its discovered definition reads. (A discovered target whose
// definition differs from the base's counts as changed whatever it reads.) Its specs
// are resolved (Resolve).
func InputsOf(t Target, head *source.Snapshot, cache *rendercache.Cache) render.Inputs {
	var in render.Inputs
	for _, spec := range append([]render.Spec{t.Spec}, t.More...) {
		si := specInputs(spec, head, cache)
		in.Trees = append(in.Trees, si.Trees...)
		in.Files = append(in.Files, si.Files...)
		in.Dirs = append(in.Dirs, si.Dirs...)
	}
	def := definitionInputs(t.Definition, nil)
	in.Files = append(in.Files, def.Files...)
	in.Trees = append(in.Trees, def.Trees...)
	return in
}

// definitionInputs are what a discovered target's definition reads: its files and
// the unconfirmed trees; a file that is a kustomization file (an object a
// kustomization generates, such as the Secret a valuesFrom reads that a
// secretGenerator makes) stands for its directory's tree, which that build reads.
func definitionInputs(files, trees []string) render.Inputs {
	in := render.Inputs{Files: files, Trees: slices.Clone(trees)}
	for _, f := range files {
		if slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(f)) {
			in.Trees = append(in.Trees, path.Dir(f))
		}
	}
	return in
}

// specInputs returns what rendering a target's resolved spec depends on; nothing for
// a spec that renders nothing (a target refused before it had one).
func specInputs(spec render.Spec, head *source.Snapshot, cache *rendercache.Cache) render.Inputs {
	switch spec.Renderer {
	case "":
		if spec.Path == "" {
			return render.Inputs{}
		}
	case render.RendererKustomize:
		spec.Helm = render.HelmOptions{}
		res, err := cache.RenderSnapshot(head, spec)
		if err == nil && len(res.Failures) == 0 {
			return res.Inputs
		}
		// A failed build may not have read everything: count the whole directory too,
		// and whatever the failure claims (a worker that crashed claims the repository).
		in := render.Inputs{Trees: []string{spec.Path}}
		if err == nil {
			in.Files, in.Dirs = res.Inputs.Files, res.Inputs.Dirs
			in.Trees = append(in.Trees, res.Inputs.Trees...)
		}
		return in
	case render.RendererHelm:
		in := render.Inputs{Trees: []string{spec.Path}}
		if spec.Helm.Chart != nil {
			in.Trees = nil // a fetched chart: its definition and values files count
		}
		for _, vf := range spec.Helm.ValuesFiles {
			if !strings.HasPrefix(vf, render.ChartValuesPrefix) {
				in.Files = append(in.Files, path.Join(spec.Path, vf))
			}
		}
		return in
	}
	return render.Inputs{Trees: []string{spec.Path}}
}

// touched are the changed paths that are among inputs.
func touched(changed []string, inputs render.Inputs) []string {
	var out []string
	for _, p := range changed {
		if inputs.Touched(p) {
			out = append(out, p)
		}
	}
	return out
}

// Resolve decides, once, how each target renders, as its applier builds its paths:
// every spec's renderer (detected where drift.yaml names none), in the head and, for
// a pull request (base set), in the base, which the base's render of the target uses
// (BaseSpecs). Preview and the render cache take the specs as they are.
func Resolve(targets []Target, head, base *source.Snapshot) {
	for i := range targets {
		t := &targets[i]
		if t.rendersNothing() {
			continue
		}
		specs := append([]render.Spec{t.Spec}, t.More...)
		if base != nil {
			baseSpecs := t.BaseSpecs
			if baseSpecs == nil {
				baseSpecs = specs
			}
			t.BaseSpecs = resolved(baseSpecs, t.Applier, base.FS)
		}
		specs = resolved(specs, t.Applier, head.FS)
		t.Spec, t.More = specs[0], specs[1:]
	}
}

// rendersNothing reports a discovered target without a source to render (discovery
// names the renderer of every source it makes).
func (t Target) rendersNothing() bool { return t.From != "" && t.Spec.Renderer == "" }

// resolved are specs with their renderers decided in fsys (renderSpec).
func resolved(specs []render.Spec, a applier.Applier, fsys fs.FS) []render.Spec {
	out := make([]render.Spec, len(specs))
	for i, spec := range specs {
		out[i] = renderSpec(spec, a, fsys)
	}
	return out
}

// renderSpec is spec with its renderer decided as applier a builds the path: detected
// when drift.yaml does not say, and for an applier that builds as Flux does a
// directory without a kustomization file built with kustomize, and any kustomization
// without kustomize's load restrictions (render.KustomizeAsFlux).
func renderSpec(spec render.Spec, a applier.Applier, fsys fs.FS) render.Spec {
	asFlux := a.Traits().BuildsAsFlux
	if spec.Renderer == "" {
		spec.Renderer = render.Detect(fsys, spec.Path)
		if asFlux && spec.Renderer == render.RendererPlain && isDir(fsys, spec.Path) {
			spec.Renderer = render.RendererKustomize
		}
	}
	spec.AsFlux = asFlux && spec.Renderer == render.RendererKustomize
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
