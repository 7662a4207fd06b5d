package render

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/reason"
)

// Nothing silently empty: a target that renders no object says why, and a directory
// that is a chart waiting for a build step is said to be one, not read as YAML.

// otherFormats are manifest sources drift does not render, by file extension.
var otherFormats = map[string]string{
	".jsonnet":   "jsonnet",
	".libsonnet": "jsonnet",
	".cue":       "CUE",
	".k":         "KCL",
	".pkl":       "Pkl",
	".star":      "Starlark",
	".dhall":     "Dhall",
}

// maxLooked bounds the files looked at to explain an empty rendering.
const maxLooked = 10000

// explainEmpty gives a rendering without objects or failures its reason: an error
// when the target holds manifests in a format drift does not render, a note
// otherwise (an empty directory, a kustomization without resources).
func explainEmpty(fsys fs.FS, spec Spec, res *Result) {
	if len(res.Objects) > 0 || len(res.Failures) > 0 {
		return
	}
	dir := cleanDir(spec.Path)
	found := map[string][]string{}
	looked := 0
	_ = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || looked >= maxLooked {
			return fs.SkipDir
		}
		looked++
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if format, ok := otherFormats[strings.ToLower(path.Ext(p))]; ok && !d.IsDir() {
			found[format] = append(found[format], p)
		}
		return nil
	})
	if len(found) == 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s renders no objects (%s): nothing to preview", displayDir(dir), spec.Renderer))
		return
	}
	var formats []string
	for f := range found {
		formats = append(formats, f)
	}
	sort.Strings(formats)
	var what []string
	for _, f := range formats {
		files := found[f]
		sort.Strings(files)
		shown := files
		if len(shown) > 3 {
			shown = shown[:3]
		}
		what = append(what, fmt.Sprintf("%s (%s%s)", f, strings.Join(shown, ", "), more(len(files)-len(shown))))
	}
	res.Failures = append(res.Failures, Failure{Source: displayDir(dir), Reason: reason.NothingRendered, Message: fmt.Sprintf(
		"renders no objects: it holds %s, which drift does not render (it reads YAML and JSON, kustomize and Helm); render them to YAML in CI and preview that output, or leave this path out",
		strings.Join(what, ", "))})
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// unbuiltChart says why a directory drift would read as plain YAML is a Helm chart
// without its Chart.yaml, which a build step generates (from Chart.template.yaml, or
// with a chart's values.yaml and templates/ and no Chart.yaml): its templates are not
// YAML, and reading them as such would give an error per template.
func unbuiltChart(fsys fs.FS, p string) (Failure, bool) {
	dir := cleanDir(p)
	if info, err := fs.Stat(fsys, dir); err != nil || !info.IsDir() {
		return Failure{}, false
	}
	has := func(name string) bool { _, err := fs.Stat(fsys, joinRepo(dir, name)); return err == nil }
	var clue string
	switch {
	case has("Chart.template.yaml"):
		clue = "Chart.template.yaml"
	case has("values.yaml") && has("templates"):
		clue = "values.yaml and templates/"
	default:
		return Failure{}, false
	}
	return Failure{Source: displayDir(dir), Reason: reason.RenderFailed, Message: fmt.Sprintf(
		"a Helm chart without Chart.yaml (it has %s): a build step generates its Chart.yaml, and drift renders charts as committed; commit the built chart, or point the target at a directory that holds it (renderer: plain if this directory is plain YAML)",
		clue)}, true
}
