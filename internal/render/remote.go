package render

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/reason"
)

// ChartRef names a chart of a chart repository (https://…, with an index.yaml) or an
// OCI registry (oci://…, the chart at RepoURL/Name), at a version or a range.
type ChartRef struct {
	RepoURL, Name, Version string
}

// String names the chart in messages, without credentials a URL may hold.
func (r ChartRef) String() string {
	u := r.RepoURL
	if p, err := url.Parse(u); err == nil {
		p.User, p.RawQuery = nil, ""
		u = p.String()
	}
	return fmt.Sprintf("chart %s %s from %s", r.Name, r.Version, u)
}

// FetchedChart is a chart archive fetched and verified.
type FetchedChart struct {
	Archive, Version, Digest string
	// Resolved says what a version range resolved to ("" for an exact version).
	Resolved string
}

// ChartFetcher fetches charts for the render cache, in drift's own process (never
// a render worker), from the repositories the trusted configuration allows.
type ChartFetcher interface {
	FetchChart(ctx context.Context, ref ChartRef) (FetchedChart, error)
}

// FetchChart completes a spec whose chart comes from a repository with the archive
// charts fetches (nil: none may be fetched); a chart that cannot be had is the
// target's failure, and a resolved range its note.
func FetchChart(ctx context.Context, charts ChartFetcher, spec Spec) (Spec, *Result) {
	ref := spec.Helm.Chart
	if charts == nil {
		return spec, &Result{Failures: []Failure{{Source: ref.String(), Reason: reason.ChartUnavailable,
			Message: ref.String() + ": no chart repository is allowed: list it in charts.allow of drift.yaml (read from the base branch)"}}}
	}
	fc, err := charts.FetchChart(ctx, *ref)
	if err != nil {
		return spec, &Result{Failures: []Failure{{Source: ref.String(), Reason: reason.ChartUnavailable, Message: err.Error()}}}
	}
	spec.Helm.Archive, spec.Helm.ChartDigest = fc.Archive, fc.Digest
	var notes *Result
	if fc.Resolved != "" {
		notes = &Result{Notes: []string{fmt.Sprintf("%s (%s)", fc.Resolved, ref.String())}}
	}
	return spec, notes
}

// addFetched adds the fetched archives of dependencies the chart does not vendor, as
// `helm dependency build` would put them in charts/.
func addFetched(ch *chart.Chart, deps map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		if vendored(ch, name) {
			continue
		}
		sub, err := loader.LoadFile(deps[name])
		if err != nil {
			return fmt.Errorf("dependency %s: cannot load the fetched archive: %v", name, err)
		}
		ch.AddDependency(sub)
	}
	return nil
}

func vendored(ch *chart.Chart, name string) bool {
	for _, sub := range ch.Dependencies() {
		if sub.Name() == name {
			return true
		}
	}
	return false
}

// FetchDependencies fetches with charts the dependencies a chart of the repository
// declares in Chart.yaml from a chart repository or registry but does not vendor in
// charts/, at the version Chart.lock pins (else Chart.yaml's). Nothing is fetched for a chart
// whose dependencies are all vendored; a file:// or named repository is left to the
// render, which says it is missing.
func FetchDependencies(ctx context.Context, charts ChartFetcher, fsys fs.FS, spec Spec) (Spec, *Result) {
	dir := cleanDir(spec.Path)
	data, err := fs.ReadFile(fsys, joinRepo(dir, "Chart.yaml"))
	if err != nil {
		return spec, nil
	}
	var meta chart.Metadata
	if yaml.Unmarshal(data, &meta) != nil || len(meta.Dependencies) == 0 {
		return spec, nil
	}
	locked := map[string]string{}
	if data, err := fs.ReadFile(fsys, joinRepo(dir, "Chart.lock")); err == nil {
		var lock chart.Lock
		if yaml.Unmarshal(data, &lock) == nil {
			for _, d := range lock.Dependencies {
				locked[d.Name] = d.Version
			}
		}
	}
	entries, _ := fs.ReadDir(fsys, joinRepo(dir, "charts"))
	var out *Result
	for _, d := range meta.Dependencies {
		remote := strings.HasPrefix(d.Repository, "https://") || strings.HasPrefix(d.Repository, "http://") || strings.HasPrefix(d.Repository, "oci://")
		if !remote || vendoredIn(entries, d.Name) {
			continue
		}
		ref := ChartRef{RepoURL: d.Repository, Name: d.Name, Version: cmp.Or(locked[d.Name], d.Version)}
		dep := spec
		dep.Helm.Chart = &ref
		fetched, extra := FetchChart(ctx, charts, dep)
		if extra != nil && len(extra.Failures) > 0 {
			extra.Failures[0].Source = joinRepo(dir, "Chart.yaml")
			extra.Failures[0].Message = "dependency " + d.Name + " is not vendored in " + joinRepo(dir, "charts") + "/" + ignoredNote(fsys, dir) + ": " + extra.Failures[0].Message
			return spec, extra
		}
		if spec.Helm.Dependencies == nil {
			spec.Helm.Dependencies = map[string]string{}
		}
		spec.Helm.Dependencies[d.Name] = fetched.Helm.Archive
		if extra != nil {
			if out == nil {
				out = &Result{}
			}
			out.Notes = append(out.Notes, extra.Notes...)
		}
	}
	return spec, out
}

// vendoredIn reports whether charts/ holds the dependency, as a directory or an
// archive named after it.
func vendoredIn(entries []fs.DirEntry, name string) bool {
	for _, e := range entries {
		if e.Name() == name || (strings.HasPrefix(e.Name(), name+"-") && strings.HasSuffix(e.Name(), ".tgz")) {
			return true
		}
	}
	return false
}

// FetchHelmCharts fetches with charts the charts a kustomize target's helmCharts
// entries pull (they have a repo, and the chart is not in the chart home), as
// `kustomize build --enable-helm` would pull them, from repositories charts.allow
// lists.
func FetchHelmCharts(ctx context.Context, charts ChartFetcher, fsys fs.FS, spec Spec) (Spec, *Result) {
	kusts, err := checkKustomization(fsys, cleanDir(spec.Path), true)
	if err != nil || len(kusts) == 0 {
		return spec, nil // the render says what is wrong
	}
	var out *Result
	for _, hc := range kusts {
		for _, h := range hc.k.HelmCharts {
			if h.Repo == "" {
				continue
			}
			if info, err := fs.Stat(fsys, chartDir(hc, h)); err == nil && info.IsDir() {
				continue // vendored in the chart home: kustomize pulls nothing
			}
			dep := spec
			dep.Helm.Chart = &ChartRef{RepoURL: h.Repo, Name: h.Name, Version: chartVersion(h)}
			fetched, extra := FetchChart(ctx, charts, dep)
			if extra != nil && len(extra.Failures) > 0 {
				extra.Failures[0].Source = hc.file
				extra.Failures[0].Message = "helmCharts " + h.Name + ": " + extra.Failures[0].Message
				return spec, extra
			}
			if spec.HelmCharts == nil {
				spec.HelmCharts = map[string]string{}
			}
			spec.HelmCharts[chartKey(h)] = fetched.Helm.Archive
			if extra != nil {
				if out == nil {
					out = &Result{}
				}
				out.Notes = append(out.Notes, extra.Notes...)
			}
		}
	}
	return spec, out
}

// ChartValuesPrefix marks a values file of a fetched chart that is a file of the chart
// itself (Argo CD's valueFiles, Flux's chart.spec.valuesFiles), not of the repository.
const ChartValuesPrefix = "chart:"

// fileOfChart is a file of a loaded chart by its path in the chart (nil: none).
func fileOfChart(ch *chart.Chart, name string) []byte {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	for _, f := range ch.Raw {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// ignoredNote says which .gitignore leaves a chart's vendored dependencies out of the
// commit ("" none).
func ignoredNote(fsys fs.FS, dir string) string {
	if gi := ignoresCharts(fsys, dir); gi != "" {
		return fmt.Sprintf(" (%s leaves charts/ out of the commit: drift reads the commit, not the work tree)", gi)
	}
	return ""
}
