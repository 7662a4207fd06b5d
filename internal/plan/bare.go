package plan

import (
	"cmp"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/discover"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// splitBare previews each bare target (a directory drift previews on its own: the
// one it runs in, or --path) as what is in it would be applied: each directory below
// it with a chart (Chart.yaml) or a kustomization no other one there includes is a
// target of its own, rendered with Helm or built with kustomize, and every chart and
// kustomization directory is left out of the bare target's plain read, which reads
// Kubernetes objects only (render.Spec.ObjectsOnly). A Chart.yaml, a values file, a
// kustomization file or a chart's templates are never read as objects.
func splitBare(targets []Target, head *source.Snapshot) []Target {
	var out []Target
	for _, t := range targets {
		if !t.Bare || t.Spec.Renderer != "" || render.Detect(head.FS, t.Spec.Path) != render.RendererPlain {
			out = append(out, t)
			continue
		}
		dir := path.Clean(cmp.Or(t.Spec.Path, "."))
		if info, err := fs.Stat(head.FS, dir); err != nil || !info.IsDir() {
			out = append(out, t)
			continue
		}
		t.Spec.ObjectsOnly = true
		own, left := builtBelow(head.FS, dir)
		if len(left) == 0 {
			out = append(out, t)
			continue
		}
		var rels []string
		for _, d := range left {
			rels = append(rels, relTo(dir, d)+"/*")
		}
		excludeBelow(&t, rels)
		t.Notes = append(t.Notes, "directories below it with a chart or a kustomization are rendered as their own targets, never read as plain files: "+strings.Join(own, ", "))
		out = append(out, t)
		for _, d := range own {
			c := t
			// A chart's release is named as a chart previewed with --path is.
			c.Name, c.Spec, c.Notes, c.Bare = d, withReleaseName(render.Spec{Path: d}), nil, false
			out = append(out, c)
		}
	}
	return out
}

// builtBelow are the directories below dir that are targets of their own (charts,
// and kustomizations no other one below dir includes) and those to leave out of a
// plain read of dir (every chart and kustomization directory).
func builtBelow(fsys fs.FS, dir string) (own, left []string) {
	var files []string
	var charts []string
	_ = fs.WalkDir(fsys, dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p != dir && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if p != dir {
				if info, err := fs.Stat(fsys, path.Join(p, "Chart.yaml")); err == nil && !info.IsDir() {
					charts = append(charts, p)
					return fs.SkipDir // its templates, values and subcharts are the chart's
				}
			}
			return nil
		}
		if ext := strings.ToLower(path.Ext(p)); ext == ".yaml" || ext == ".yml" || e.Name() == "Kustomization" {
			files = append(files, p)
		}
		return nil
	})
	all, roots := discover.KustomizeDirs(fsys, files)
	for _, d := range roots {
		if d != dir {
			own = append(own, d)
		}
	}
	own = append(own, charts...)
	left = append(slices.DeleteFunc(all, func(d string) bool { return d == dir }), charts...)
	sort.Strings(own)
	sort.Strings(left)
	return own, left
}

// excludeBelow leaves the paths (globs relative to the target's directory) out of a
// plain target's read, beside what it leaves out already.
func excludeBelow(t *Target, rels []string) {
	d := t.Spec.Directory
	if d == nil {
		d = &render.DirectoryOptions{Recurse: true}
	}
	if prev := strings.TrimSuffix(strings.TrimPrefix(d.Exclude, "{"), "}"); prev != "" {
		rels = append(rels, strings.Split(prev, ",")...)
	}
	sort.Strings(rels)
	copied := *d
	copied.Exclude = "{" + strings.Join(slices.Compact(rels), ",") + "}"
	t.Spec.Directory = &copied
}

// relTo is p relative to dir (both clean repository paths).
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}
