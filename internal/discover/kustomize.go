package discover

import (
	"io/fs"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/render"
)

// kustomizeLayout tells the files a kustomization reads (its directory's files, and
// the resources, patches and components it names) from manifests of their own: a
// patch of a HelmRelease is not a HelmRelease, and what Flux or Argo CD applies of a
// kustomize directory is what kustomize builds of it. Its roots are the kustomize
// directories no other kustomization includes: what `kubectl kustomize DIR` builds.
type kustomizeLayout struct {
	// kustomizations maps a directory to its kustomization file.
	kustomizations map[string]string
	// inputs are the files some kustomization reads.
	inputs map[string]bool
	// reads maps a kustomize directory to the files it reads and the directories it
	// includes.
	reads, includes map[string][]string
	// roots are the kustomize directories nothing includes, sorted.
	roots []string
	// opaque are the kustomize directories whose output their files do not tell:
	// they inflate Helm charts or run generators and transformers.
	opaque map[string]bool
}

// kustomization is what the layout reads of a kustomization file.
type kustomization struct {
	Resources             []string `json:"resources"`
	Bases                 []string `json:"bases"`
	Components            []string `json:"components"`
	PatchesStrategicMerge []string `json:"patchesStrategicMerge"`
	Patches               []struct {
		Path string `json:"path"`
	} `json:"patches"`
	HelmCharts                  []any    `json:"helmCharts"`
	HelmChartInflationGenerator []any    `json:"helmChartInflationGenerator"`
	Generators                  []string `json:"generators"`
	Transformers                []string `json:"transformers"`
	Validators                  []string `json:"validators"`
}

// layoutOf reads the kustomizations of the directories files are in.
func layoutOf(fsys fs.FS, files []string) *kustomizeLayout {
	l := &kustomizeLayout{kustomizations: map[string]string{}, inputs: map[string]bool{},
		reads: map[string][]string{}, includes: map[string][]string{}, opaque: map[string]bool{}}
	byDir := map[string][]string{}
	for _, f := range files {
		byDir[path.Dir(f)] = append(byDir[path.Dir(f)], f)
	}
	for dir := range byDir {
		if k := render.FindKustomization(fsys, repoDir(dir)); k != "" {
			l.kustomizations[dir] = k
		}
	}
	included := map[string]bool{}
	for dir, file := range l.kustomizations {
		for _, f := range byDir[dir] {
			l.inputs[f] = true
			l.reads[dir] = append(l.reads[dir], f)
		}
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			continue
		}
		var k kustomization
		if yaml.Unmarshal(data, &k) != nil {
			l.opaque[dir] = true // what the render makes of it is the render's to say
			continue
		}
		if len(k.HelmCharts)+len(k.HelmChartInflationGenerator)+len(k.Generators)+len(k.Transformers)+len(k.Validators) > 0 {
			l.opaque[dir] = true
		}
		entries := append(append(append(append([]string{}, k.Resources...), k.Bases...), k.Components...), k.PatchesStrategicMerge...)
		for _, p := range k.Patches {
			entries = append(entries, p.Path)
		}
		for _, e := range entries {
			if e == "" || strings.Contains(e, "://") || strings.HasPrefix(e, "github.com/") {
				continue // remote: the render refuses it
			}
			p := path.Clean(path.Join(dir, e))
			if _, isDir := l.kustomizations[p]; isDir {
				l.includes[dir] = append(l.includes[dir], p)
				included[p] = true
				continue
			}
			if info, err := fs.Stat(fsys, repoDir(p)); err == nil && !info.IsDir() {
				l.inputs[p] = true
				l.reads[dir] = append(l.reads[dir], p)
			}
		}
	}
	for dir := range l.kustomizations {
		if !included[dir] {
			l.roots = append(l.roots, dir)
		}
	}
	sort.Strings(l.roots)
	return l
}

// closure is every file a kustomize directory reads, through what it includes.
func (l *kustomizeLayout) closure(dir string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(d string)
	walk = func(d string) {
		if seen[d] {
			return
		}
		seen[d] = true
		out = append(out, l.reads[d]...)
		for _, inc := range l.includes[d] {
			walk(inc)
		}
	}
	walk(dir)
	return out
}

// opaqueWithin reports whether a kustomize directory, or one it includes, makes
// what its files do not tell (opaque).
func (l *kustomizeLayout) opaqueWithin(dir string) bool {
	seen := map[string]bool{}
	var walk func(d string) bool
	walk = func(d string) bool {
		if seen[d] {
			return false
		}
		seen[d] = true
		if l.opaque[d] {
			return true
		}
		for _, inc := range l.includes[d] {
			if walk(inc) {
				return true
			}
		}
		return false
	}
	return walk(dir)
}

// repoDir is a repository directory as fs.FS names it ("." for the root).
func repoDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// KustomizeDirs are the directories of files (repository paths) that hold a
// kustomization, sorted, and of them the roots: those no other of them includes
// as a resource, base or component.
func KustomizeDirs(fsys fs.FS, files []string) (all, roots []string) {
	l := layoutOf(fsys, files)
	for dir := range l.kustomizations {
		all = append(all, dir)
	}
	sort.Strings(all)
	return all, l.roots
}
