package plan

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// CoveredFile is one file the change touches, with what of the run reads it: the
// report accounts for it as previewed, not previewed, or read by nothing
// (report.Coverage).
type CoveredFile struct {
	source.FileChange
	// Readers are the targets that read the file: in the head, or for a file the
	// change removes, in the base. "discovery" reads a file it could not read as an
	// Argo CD or Flux object.
	Readers []string
	// Gone are the targets the change removes (the base defines them, the head
	// does not) that read the file in the base.
	Gone []string
	// Excluded says why nothing deploys the file though it may look like a
	// manifest: the base's drift.yaml names it in deploysNothing, or, in a repository
	// deployed through Flux alone, Flux's source-controller leaves it out of every
	// artifact ("": neither).
	Excluded string
	// Outside says the run was asked for paths (--path) that the file is not under.
	Outside bool
	// Deploys says a controller could deploy from the file: a document with
	// apiVersion and kind, a kustomization, a chart's file or a values file. Set for
	// files nothing reads.
	Deploys bool
}

// DiscoveryReader names discovery among a file's readers.
const DiscoveryReader = "discovery"

// maxClassified is the most of a file read to tell whether it holds an object: a
// larger file counts as one that could deploy.
const maxClassified = 8 << 20

// coverage accounts for every file the change touches (files): the targets that
// read it, or, for a file nothing reads, whether drift.yaml declares it deploys
// nothing, whether it lies outside the paths asked for, and whether a controller
// could deploy from it. base is the base's discovery (nil: none); asked are the
// paths the run was asked for (none: the repository).
func (p *Plan) coverage(files []source.FileChange, base *Baseline, asked []string) []CoveredFile {
	readers := map[string][]string{}
	for _, t := range p.Targets {
		for _, r := range t.Reads {
			readers[r] = append(readers[r], t.Name)
		}
	}
	for _, f := range p.DiscoveryFailures {
		readers[f.Source] = append(readers[f.Source], DiscoveryReader)
	}
	out := make([]CoveredFile, len(files))
	var unread []int
	for i, f := range files {
		c := CoveredFile{FileChange: f}
		c.Readers = append(c.Readers, readers[f.Path]...)
		if f.From != "" {
			c.Readers = append(c.Readers, readers[f.From]...)
		}
		slices.Sort(c.Readers)
		c.Readers = slices.Compact(c.Readers)
		out[i] = c
		if len(c.Readers) == 0 && f.Removed {
			unread = append(unread, i)
		}
	}
	if len(unread) > 0 {
		p.baseReaders(out, unread, base)
	}
	// The trusted drift.yaml's (the base's on a pull request: config.Trusted).
	var nothing []string
	if p.Config != nil && p.Config.Use != nil {
		nothing = p.Config.Use.DeploysNothing
	}
	fluxOnly := slices.ContainsFunc(p.Targets, func(t Target) bool { return t.Flux != nil }) &&
		!slices.ContainsFunc(p.Targets, func(t Target) bool { return t.ArgoCD != nil || t.From == "" })
	ignored := map[*source.Snapshot]func(string) bool{}
	fluxIgnored := func(s *source.Snapshot) func(string) bool {
		if ignored[s] == nil {
			ignored[s] = render.FluxIgnored(s.FS)
		}
		return ignored[s]
	}
	for i := range out {
		c := &out[i]
		if len(c.Readers) > 0 || len(c.Gone) > 0 {
			continue
		}
		side := p.Head
		if c.Removed {
			side = p.Base
		}
		switch {
		case slices.ContainsFunc(nothing, func(g string) bool { return matchPath(g, c.Path) }):
			c.Excluded = "drift.yaml's deploysNothing names it"
			continue
		case fluxOnly && fluxIgnored(side)(c.Path):
			c.Excluded = "Flux's source-controller leaves it out of the repository's artifacts (its default exclusions, .sourceignore), and only Flux deploys from this repository"
			continue
		}
		c.Outside = len(asked) > 0 && !slices.ContainsFunc(asked, func(a string) bool { return under(c.Path, a) })
		c.Deploys = couldDeploy(side.FS, c.Path)
	}
	return out
}

// baseReaders finds, for the removed files at idx that nothing in the head reads,
// the targets that read them in the base: the head's targets as the base renders
// them, and the targets the change removes (Gone).
func (p *Plan) baseReaders(out []CoveredFile, idx []int, base *Baseline) {
	add := func(name string, in render.Inputs, gone bool) {
		for _, i := range idx {
			if !in.Touched(out[i].Path) {
				continue
			}
			if gone {
				out[i].Gone = append(out[i].Gone, name)
			} else if !slices.Contains(out[i].Readers, name) {
				out[i].Readers = append(out[i].Readers, name)
			}
		}
	}
	names := map[string]bool{}
	for _, t := range p.Targets {
		names[t.Name] = true
		if t.New || t.rendersNothing() {
			continue
		}
		bt := t
		if t.BaseSpecs != nil {
			bt.Spec, bt.More = t.BaseSpecs[0], t.BaseSpecs[1:]
		}
		if t.Skipped != "" && t.Skip != SkipUnchanged {
			add(t.Name, definitionInputs(t.Definition, append(specPaths(bt), t.Unconfirmed...)), false)
			continue
		}
		add(t.Name, InputsOf(bt, p.Base, p.Cache), false)
	}
	if base != nil {
		for name, bt := range base.Targets {
			if names[name] {
				continue
			}
			in := definitionInputs(bt.Inputs, bt.Unconfirmed)
			for _, s := range bt.Specs {
				in.Trees = append(in.Trees, cmpPath(s.Path))
			}
			add(name, in, true)
		}
	}
	for _, i := range idx {
		slices.Sort(out[i].Readers)
		slices.Sort(out[i].Gone)
	}
}

// specPaths are the paths a target's specs render ("." the repository).
func specPaths(t Target) []string {
	var out []string
	for _, spec := range append([]render.Spec{t.Spec}, t.More...) {
		if spec.Path != "" || spec.Renderer != "" {
			out = append(out, cmpPath(spec.Path))
		}
	}
	return out
}

func cmpPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// under reports whether repository path p is dir or below it ("." or "": the root).
func under(p, dir string) bool {
	return dir == "" || dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// matchPath reports whether p matches the doublestar glob g, or lies below a
// directory g names.
func matchPath(g, p string) bool {
	g = strings.TrimSuffix(strings.TrimPrefix(g, "./"), "/")
	if ok, _ := doublestar.Match(g, p); ok {
		return true
	}
	ok, _ := doublestar.Match(g+"/**", p)
	return ok
}

// couldDeploy reports whether a controller could deploy from the file at p of
// fsys: a kustomization, a chart's file (Chart.yaml, or a YAML, JSON, template or
// archive below a directory with one), a values file, or a YAML or JSON document with apiVersion and kind.
func couldDeploy(fsys fs.FS, p string) bool {
	name := path.Base(p)
	switch name {
	case "kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml", "Chart.lock", "requirements.yaml":
		return true
	}
	ext := strings.ToLower(path.Ext(name))
	switch ext {
	case ".yaml", ".yml", ".json", ".tpl", ".tgz":
		for dir := path.Dir(p); ; dir = path.Dir(dir) {
			if info, err := fs.Stat(fsys, path.Join(dir, "Chart.yaml")); err == nil && !info.IsDir() {
				return true // a chart's templates, values, schema or dependency
			}
			if dir == "." || dir == "/" {
				break
			}
		}
	}
	if ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return false
	}
	if strings.HasPrefix(strings.ToLower(name), "values") {
		return true
	}
	f, err := fsys.Open(p)
	if err != nil {
		return false // a link that leads nowhere, a nested repository: no content here
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxClassified+1))
	if err != nil || len(data) > maxClassified {
		return true // cannot be told apart from a manifest
	}
	return render.HoldsObject(data)
}
