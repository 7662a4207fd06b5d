package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/source"
)

// HelmOptions are what a Helm target is rendered with.
type HelmOptions struct {
	ReleaseName      string
	ReleaseNamespace string
	// ValuesFiles are relative to the chart directory, applied in order; each must stay
	// inside the repository.
	ValuesFiles []string
	// Values are applied last, over the values files.
	Values map[string]any
	// KubeVersion and APIVersions are the target cluster's, for .Capabilities; Helm's
	// defaults apply when they are empty.
	KubeVersion string
	APIVersions []string
	// Lookup names the cluster whose objects the chart's `lookup` reads, as `helm
	// upgrade` does (the helm applier); the caller registers it with
	// Cache.AllowLookup. Empty: lookup finds nothing, and templates never reach a
	// cluster.
	Lookup string `json:",omitempty"`
	// Chart, when set, is a chart of a chart repository or OCI registry, rendered
	// instead of a directory of the repository (the spec's Path is then where its
	// values files are relative to). The render cache fetches it (Cache.Charts) and
	// sets Archive, the verified archive, and ChartDigest.
	Chart       *ChartRef `json:",omitempty"`
	Archive     string    `json:",omitempty"`
	ChartDigest string    `json:",omitempty"`
	// (A fetched chart's ValuesFiles are repository paths, or files of the chart
	// itself named ChartValuesPrefix + their path in the chart.)
	//
	// ReplaceChartValues makes the values files the chart's own values, in place of
	// its values.yaml, as Flux's source-controller packages a chart with
	// chart.spec.valuesFiles; Values then go over them.
	ReplaceChartValues bool `json:",omitempty"`
	//
	// Dependencies are the archives of dependencies the chart declares but does not
	// vendor in charts/, by name, fetched by the render cache from their repositories
	// as `helm dependency build` would (the version Chart.lock pins, else Chart.yaml's).
	Dependencies map[string]string `json:",omitempty"`
	// Revision is the release revision rendered: 0 or 1 renders an install
	// (.Release.IsInstall), a higher one an upgrade to that revision
	// (.Release.IsUpgrade), as `helm upgrade` renders a release that exists.
	Revision int `json:",omitempty"`
}

// Helm renders the chart in dir with the Helm SDK, in process, as `helm install`
// would for a new release: the chart and its vendored dependencies (charts/) come
// from the snapshot; nothing is fetched; lookup finds nothing, since templates never
// reach the cluster; CRDs in crds/ are included; hooks are previewed as Helm runs
// them (helm_hooks.go).
func Helm(fsys fs.FS, dir string, opts HelmOptions) *Result {
	return helm(fsys, dir, opts, DefaultLimits(), nil)
}

// helm renders; lookup, when not nil, is the cluster connection opts.Lookup names.
func helm(fsys fs.FS, dir string, opts HelmOptions, limits Limits, lookup *rest.Config) *Result {
	dir = cleanDir(dir)
	res := &Result{Inputs: Inputs{Trees: []string{dir}}}
	fail := func(source string, why reason.Reason, format string, args ...any) *Result {
		res.Failures = append(res.Failures, Failure{Source: source, Reason: why, Message: fmt.Sprintf(format, args...)})
		return res
	}
	chartFile := joinRepo(dir, "Chart.yaml")
	var ch *chart.Chart
	var what string
	if opts.Chart != nil {
		// A fetched chart: its files are the archive's; the repository gives only the
		// values files.
		res.Inputs.Trees = nil
		chartFile = opts.Chart.String()
		if opts.Archive == "" {
			return fail(chartFile, reason.ChartUnavailable, "%s was not fetched: this is a bug in drift, please report it", opts.Chart)
		}
		var err error
		if ch, err = loader.LoadFile(opts.Archive); err != nil {
			return fail(chartFile, reason.RenderFailed, "%s (%s): cannot load the archive: %v", opts.Chart, opts.ChartDigest, err)
		}
		what = opts.Chart.String()
	} else {
		if _, err := fs.Stat(fsys, chartFile); err != nil {
			if f, ok := unbuiltChart(fsys, dir); ok {
				return &Result{Failures: []Failure{f}, Inputs: res.Inputs}
			}
		}
		files, err := chartFiles(fsys, dir)
		if err != nil {
			why := reason.RenderFailed
			if source.IsOutside(err) {
				why = reason.Refused
			}
			return fail(chartFile, why, "cannot read the chart: %v", err)
		}
		if ch, err = loader.LoadFiles(files); err != nil {
			return fail(chartFile, reason.RenderFailed, "cannot load the chart in %s: %v", displayDir(dir), err)
		}
		what = fmt.Sprintf("chart %s (%s)", ch.Name(), displayDir(dir))
		if err := addFetched(ch, opts.Dependencies); err != nil {
			return fail(chartFile, reason.ChartUnavailable, "%s: %v", what, err)
		}
		if err := checkVendored(fsys, ch, dir); err != nil {
			return fail(chartFile, reason.RenderFailed, "%s: %v", what, err)
		}
	}

	vals := map[string]any{}
	for _, vf := range opts.ValuesFiles {
		if name, ok := strings.CutPrefix(vf, ChartValuesPrefix); ok && opts.Chart != nil {
			data := fileOfChart(ch, name)
			if data == nil {
				return fail(chartFile, reason.RenderFailed, "%s: values file %s is not in the chart", what, name)
			}
			v, err := chartutil.ReadValues(data)
			if err != nil {
				return fail(chartFile, reason.RenderFailed, "%s: values file %s is not valid YAML: %v", what, name, err)
			}
			vals = mergeValues(vals, v)
			continue
		}
		p, err := valuesPath(dir, vf)
		if err != nil {
			return fail(chartFile, reason.Refused, "%s: values file %s %v", what, vf, err)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			why := reason.RenderFailed
			if source.IsOutside(err) {
				why = reason.Refused
			}
			return fail(p, why, "%s: values file %s cannot be read: %s", what, vf, unwrapPathError(err))
		}
		res.Inputs.Files = append(res.Inputs.Files, p)
		v, err := chartutil.ReadValues(data)
		if err != nil {
			return fail(p, reason.RenderFailed, "%s: values file %s is not valid YAML: %v", what, vf, err)
		}
		vals = mergeValues(vals, v)
	}
	if opts.ReplaceChartValues && len(opts.ValuesFiles) > 0 {
		ch.Values, vals = vals, map[string]any{}
	}
	if opts.Values != nil {
		v, err := valuesAsRead(opts.Values)
		if err != nil {
			return fail(chartFile, reason.Invalid, "%s: values: %v", what, err)
		}
		vals = mergeValues(vals, v)
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return fail(chartFile, reason.RenderFailed, "%s: dependencies: %v", what, err)
	}

	caps := chartutil.DefaultCapabilities.Copy()
	if opts.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(opts.KubeVersion)
		if err != nil {
			return fail(chartFile, reason.RenderFailed, "%s: the cluster's version %q cannot be parsed: %v", what, opts.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if len(opts.APIVersions) > 0 {
		caps.APIVersions = chartutil.VersionSet(opts.APIVersions)
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return fail(chartFile, reason.RenderFailed, "%s requires kubeVersion %s, which the cluster's Kubernetes %s does not meet", what, ch.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	release := chartutil.ReleaseOptions{Name: opts.ReleaseName, Namespace: opts.ReleaseNamespace, Revision: 1, IsInstall: true}
	if opts.Revision > 1 {
		release.Revision, release.IsInstall, release.IsUpgrade = opts.Revision, false, true
	}
	values, err := chartutil.ToRenderValues(ch, vals, release, caps)
	if err != nil {
		return fail(chartFile, reason.RenderFailed, "%s: values: %v", what, err)
	}
	// The zero Engine has no cluster connection: lookup returns an empty result and
	// getHostByName an empty string. With Lookup, lookup reads the cluster as Helm's
	// own upgrade does (in a render worker, through drift's read-only proxy).
	var e engine.Engine
	if opts.Lookup != "" {
		if lookup == nil {
			return fail(chartFile, reason.RenderFailed, "%s: lookup should read cluster %q, but drift has no connection to it for rendering: this is a bug in drift, please report it", what, opts.Lookup)
		}
		e = engine.New(lookup)
	}
	out, err := e.Render(ch, values)
	if err != nil {
		return fail(templateSource(err, ch.Name(), dir, chartFile), reason.RenderFailed, "%s: template failed: %v", what, err)
	}
	if err := checkHelmOutput(out, limits.OutputBytes); err != nil {
		err.template = chartSource(err.template, ch.Name(), dir)
		return fail(err.template, reason.TooLarge, "%s: %v", what, err)
	}
	for name := range out {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(out, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(out, nil, releaseutil.InstallOrder)
	if err != nil {
		return fail(chartFile, reason.RenderFailed, "%s: rendered manifests cannot be parsed: %v", what, err)
	}

	docs := map[string]int{}
	add := func(name, content string, notes []Note) {
		source := chartSource(name, ch.Name(), dir)
		docs[source]++
		objs, fails := decodeDocument(source, docs[source], []byte(content), DefaultMaxDocumentBytes)
		for i := range objs {
			objs[i].Notes = append(objs[i].Notes, notes...)
		}
		res.Objects = append(res.Objects, objs...)
		res.Failures = append(res.Failures, fails...)
	}
	crdNote := []Note{{Reason: reason.HelmCRD, Message: "CRD from the chart's crds/ directory: Helm creates it when it is absent and never updates or deletes it; an upgrade leaves a changed CRD as it is"}}
	for _, crd := range ch.CRDObjects() {
		for _, doc := range SplitDocuments(crd.File.Data) {
			add(crd.Filename, string(doc), crdNote)
		}
	}
	sort.SliceStable(manifests, func(i, j int) bool { return manifests[i].Name < manifests[j].Name })
	for _, m := range manifests {
		// Helm trims each document and writes it into the release manifest followed by
		// a newline, and applies that stream: a "|" block ending the document keeps its
		// final newline.
		add(m.Name, m.Content+"\n", nil)
	}
	addHooks(res, hooks, func(name string) string { return chartSource(name, ch.Name(), dir) }, add)
	markDuplicates(res)
	return res
}

// chartFiles reads every file of the chart in dir, as Helm's own directory loader
// does: .helmignore honoured, symlinks followed (the snapshot keeps them inside the
// repository).
func chartFiles(fsys fs.FS, dir string) ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if data, err := fs.ReadFile(fsys, joinRepo(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", joinRepo(dir, ignore.HelmIgnore), pathCause(err))
		}
	}
	rules.AddDefaults()
	var files []*loader.BufferedFile
	var walk func(rel string, depth int) error
	walk = func(rel string, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("%s: directories nested deeper than %d levels (a symlink loop?)", joinRepo(dir, rel), maxDepth)
		}
		entries, err := fs.ReadDir(fsys, joinRepo(dir, rel))
		if err != nil {
			return fmt.Errorf("%s: %w", joinRepo(dir, rel), pathCause(err))
		}
		for _, e := range entries {
			name := e.Name()
			if rel != "" {
				name = rel + "/" + name
			}
			info, err := fs.Stat(fsys, joinRepo(dir, name))
			if err != nil {
				return fmt.Errorf("%s: %w", joinRepo(dir, name), pathCause(err))
			}
			if rules.Ignore(name, info) {
				continue
			}
			if info.IsDir() {
				if err := walk(name, depth+1); err != nil {
					return err
				}
				continue
			}
			if info.Size() > DefaultMaxFileBytes {
				return fmt.Errorf("%s is %s, over the %s limit", joinRepo(dir, name), SizeOf(info.Size()), size(DefaultMaxFileBytes))
			}
			data, err := fs.ReadFile(fsys, joinRepo(dir, name))
			if err != nil {
				return fmt.Errorf("%s: %w", joinRepo(dir, name), pathCause(err))
			}
			files = append(files, &loader.BufferedFile{Name: name, Data: bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))})
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return nil, err
	}
	return files, nil
}

// checkVendored makes sure every dependency the chart declares is in its charts/
// directory, or was fetched (a chart repository charts.allow lists). When a .gitignore on the way to the chart
// leaves charts/ out of the commit, it says so.
func checkVendored(fsys fs.FS, ch *chart.Chart, dir string) error {
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		found := false
		for _, sub := range ch.Dependencies() {
			if sub.Name() == d.Name {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	why := ignoredNote(fsys, dir)
	return fmt.Errorf("dependency %s is declared in Chart.yaml but not vendored in %s%s: run `helm dependency build %s` and commit the charts/ directory, or list its chart repository in charts.allow of drift.yaml so that drift fetches it",
		strings.Join(missing, ", "), joinRepo(dir, "charts")+"/", why, displayDir(dir))
}

// ignoresCharts names the .gitignore, in the chart's directory or one above it, with
// a pattern that leaves a chart's charts/ directory or its archives out of git.
func ignoresCharts(fsys fs.FS, dir string) string {
	for d := dir; ; d = path.Dir(d) {
		if d == "." || d == "/" {
			d = ""
		}
		name := joinRepo(d, ".gitignore")
		if data, err := fs.ReadFile(fsys, name); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				switch strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(line), "**/"), "/"), "/") {
				case "charts", "charts/*", "charts/*.tgz", "*.tgz":
					return name
				}
			}
		}
		if d == "" {
			return ""
		}
	}
}

// valuesPath resolves a values file written relative to the chart directory,
// refusing absolute paths and paths that leave the repository.
func valuesPath(dir, vf string) (string, error) {
	if path.IsAbs(vf) {
		return "", fmt.Errorf("is an absolute path: values files must be in the repository, relative to the chart")
	}
	p := path.Join(dir, vf)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("leads outside the repository: values files must be in the repository")
	}
	return p, nil
}

// chartSource turns Helm's "<chart>/templates/x.yaml" into the repository path.
func chartSource(name, chartName, dir string) string {
	rest, ok := strings.CutPrefix(name, chartName+"/")
	if !ok {
		return joinRepo(dir, name)
	}
	return joinRepo(dir, rest)
}

var templateErr = regexp.MustCompile(`template: ([^:\s]+):`)

// templateSource finds the template an engine error names.
func templateSource(err error, chartName, dir, fallback string) string {
	if m := templateErr.FindStringSubmatch(err.Error()); m != nil {
		return chartSource(m[1], chartName, dir)
	}
	return fallback
}

// valuesAsRead returns values given inline (drift.yaml's helm.values) as Helm reads a
// values file, and as Argo CD and Flux pass values on: through JSON, so that every
// number is a float64. Charts that test `kindIs "float64"` or print numbers then render
// as with helm -f (an int 100 and a float64 100 are different to templates).
func valuesAsRead(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(b, &out)
}

// mergeValues merges src over dst, recursing into maps, as helm -f a -f b does.
func mergeValues(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
