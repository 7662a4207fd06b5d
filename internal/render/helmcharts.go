package render

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"path"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/reason"
)

// Kustomize's helmCharts (its HelmChartInflationGenerator, `kustomize build
// --enable-helm`) run the helm binary: `helm pull` when the chart is not in the
// chart home, then `helm template`. drift renders each chart in process instead, with
// the Helm SDK, as that command would, and builds the kustomization over the output:
//
//   - the chart is <chartHome>/<name> (chartHome from helmGlobals, default charts/
//     beside the kustomization; <chartHome>/<name>-<version>/<name> when repo and
//     version are given), else, with repo, a chart fetched by the render cache from a
//     repository charts.allow lists;
//   - values: valuesFile (default the chart's values.yaml) and valuesInline merged as
//     valuesMerge says (override, the default: inline wins; merge: the file wins;
//     replace: inline alone), then each additionalValuesFiles over them;
//   - helm template RELEASE --namespace NAMESPACE [--include-crds] [--no-hooks]: CRDs
//     only with includeCRDs, hooks unless skipHooks, Helm's default capabilities
//     unless kubeVersion and apiVersions say otherwise;
//   - the output takes the entry's place as a generator: after the kustomization's
//     resources, before its transformers.
//
// A chart without releaseName is refused: helm template --generate-name names the
// release at random on every build.

// chartKey names a helmCharts entry's fetched chart in Spec.HelmCharts.
func chartKey(h kustypes.HelmChart) string { return h.Repo + "\x00" + h.Name + "\x00" + h.Version }

// chartVersion is the version to fetch for an entry: its own, or Helm's latest ("*").
func chartVersion(h kustypes.HelmChart) string { return cmp.Or(h.Version, "*") }

// chartDir is where kustomize looks for an entry's chart.
func chartDir(hc helmCharts, h kustypes.HelmChart) string {
	home := "charts"
	if hc.k.HelmGlobals != nil && hc.k.HelmGlobals.ChartHome != "" {
		home = hc.k.HelmGlobals.ChartHome
	}
	home = joinRepo(hc.dir, home)
	if h.Repo != "" && h.Version != "" {
		home = joinRepo(home, h.Name+"-"+h.Version)
	}
	return joinRepo(home, h.Name)
}

// inflateCharts renders the helmCharts of each kustomization and returns fsys with
// those kustomizations listing the output as resources instead, what the charts read,
// and the failures.
func inflateCharts(fsys fs.FS, charts []helmCharts, archives map[string]string) (fs.FS, Inputs, []Failure) {
	over := withFiles{FS: fsys, files: map[string][]byte{}}
	var in Inputs
	var fails []Failure
	for _, hc := range charts {
		k := hc.k
		var generated []string
		for i, h := range k.HelmCharts {
			where := fmt.Sprintf("helmCharts %s", h.Name)
			if h.ReleaseName == "" {
				fails = append(fails, Failure{Source: hc.file, Reason: reason.RenderFailed, Message: where + ": releaseName is missing: helm template --generate-name would name the release at random on every build; set releaseName"})
				continue
			}
			res, reads := inflate(fsys, hc, h, archives)
			in.Trees = append(in.Trees, reads.Trees...)
			in.Files = append(in.Files, reads.Files...)
			if len(res.Failures) > 0 {
				for _, f := range res.Failures {
					f.Message = where + ": " + f.Message
					fails = append(fails, f)
				}
				continue
			}
			var doc bytes.Buffer
			for _, o := range res.Objects {
				if skipped(o, h) {
					continue
				}
				data, err := yaml.Marshal(o.Get().Object)
				if err != nil {
					fails = append(fails, Failure{Source: o.Where(), Reason: reason.RenderFailed, Message: where + ": " + err.Error()})
					continue
				}
				doc.WriteString("---\n")
				doc.Write(data)
			}
			name := fmt.Sprintf(".drift-helmcharts-%d.yaml", i+1)
			over.files[joinRepo(hc.dir, name)] = doc.Bytes()
			generated = append(generated, name)
		}
		k.HelmCharts, k.HelmGlobals = nil, nil
		k.Resources = append(append([]string(nil), k.Resources...), generated...)
		data, err := yaml.Marshal(k)
		if err != nil {
			fails = append(fails, Failure{Source: hc.file, Reason: reason.RenderFailed, Message: err.Error()})
			continue
		}
		over.files[hc.file] = data
	}
	return over, in, fails
}

// inflate renders one helmCharts entry, and says what it read.
func inflate(fsys fs.FS, hc helmCharts, h kustypes.HelmChart, archives map[string]string) (*Result, Inputs) {
	dir := chartDir(hc, h)
	opts := HelmOptions{ReleaseName: h.ReleaseName, ReleaseNamespace: h.Namespace, KubeVersion: h.KubeVersion, APIVersions: h.ApiVersions}
	in := Inputs{Trees: []string{dir}}
	fail := func(format string, args ...any) (*Result, Inputs) {
		return &Result{Failures: []Failure{{Source: hc.file, Reason: reason.RenderFailed, Message: fmt.Sprintf(format, args...)}}}, in
	}
	local := false
	if info, err := fs.Stat(fsys, dir); err == nil && info.IsDir() {
		local = true
	}
	switch {
	case local:
	case h.Repo == "":
		return fail("no chart at %s and no repo to pull it from", dir)
	case archives[chartKey(h)] == "":
		ref := ChartRef{RepoURL: h.Repo, Name: h.Name, Version: chartVersion(h)}
		return &Result{Failures: []Failure{{Source: hc.file, Reason: reason.ChartUnavailable,
			Message: ref.String() + " is not in " + dir + " and was not fetched: list its repository in charts.allow of drift.yaml (read from the base branch)"}}}, in
	default:
		opts.Chart = &ChartRef{RepoURL: h.Repo, Name: h.Name, Version: chartVersion(h)}
		opts.Archive = archives[chartKey(h)]
		in.Trees = nil
	}
	read := func(p string) (map[string]any, error) {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("values file %s cannot be read: %s", p, unwrapPathError(err))
		}
		in.Files = append(in.Files, p)
		v, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, fmt.Errorf("values file %s is not valid YAML: %v", p, err)
		}
		return v, nil
	}
	// The values file kustomize passes: valuesFile, else the chart's values.yaml.
	base := map[string]any{}
	switch {
	case h.ValuesFile != "":
		v, err := read(joinRepo(hc.dir, h.ValuesFile))
		if err != nil {
			return fail("%v", err)
		}
		base = v
	case local:
		if v, err := read(joinRepo(dir, "values.yaml")); err == nil {
			base = v
		}
	default:
		ch, err := loader.LoadFile(opts.Archive)
		if err != nil {
			return fail("%s: cannot load the archive: %v", opts.Chart, err)
		}
		base = ch.Values
	}
	inline := map[string]any{}
	if h.ValuesInline != nil {
		v, err := valuesAsRead(h.ValuesInline)
		if err != nil {
			return fail("valuesInline: %v", err)
		}
		inline = v
	}
	var vals map[string]any
	switch cmp.Or(h.ValuesMerge, "override") {
	case "override":
		vals = mergeValues(base, inline)
	case "merge":
		vals = mergeValues(inline, base)
	case "replace":
		vals = inline
	default:
		return fail("valuesMerge %q is not merge, override or replace", h.ValuesMerge)
	}
	for _, f := range h.AdditionalValuesFiles {
		v, err := read(joinRepo(hc.dir, f))
		if err != nil {
			return fail("%v", err)
		}
		vals = mergeValues(vals, v)
	}
	if len(vals) > 0 {
		opts.Values = vals
	}
	chartPath := dir
	if !local {
		chartPath = ""
	}
	return helm(fsys, chartPath, opts, DefaultLimits(), nil), in
}

// skipped says whether helm template leaves the object out: CRDs without
// includeCRDs, hooks with skipHooks.
func skipped(o Object, h kustypes.HelmChart) bool {
	for _, n := range o.Notes {
		if n.Reason == reason.HelmCRD && !h.IncludeCRDs {
			return true
		}
		if n.Reason == reason.HelmHook && h.SkipHooks {
			return true
		}
	}
	return false
}

// withFiles is fsys with some files added or replaced.
type withFiles struct {
	fs.FS
	files map[string][]byte
}

func (w withFiles) Open(name string) (fs.File, error) {
	if data, ok := w.files[name]; ok {
		return &memFile{Reader: bytes.NewReader(data), info: memInfo{name: path.Base(name), size: int64(len(data))}}, nil
	}
	return w.FS.Open(name)
}
