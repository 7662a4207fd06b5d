// Package appset expands an Argo CD ApplicationSet into the Applications its
// generators generate, as the ApplicationSet controller (argoproj/argo-cd
// applicationset/generators and applicationset/utils) expands it: list, git
// (directories and files, read from the repository previewed), clusters (from the
// cluster Secrets the caller knows), matrix and merge, with selectors, values,
// goTemplate or fasttemplate rendering, generator-level templates and templatePatch.
//
// It is pure: no Kubernetes API server, no network, no programs run. Generators
// that would call an API (pullRequest, scmProvider, clusterDecisionResource,
// plugin) or read another repository or revision are reported as skipped. Every
// input-driven loop checks the context, and the number of parameter sets and
// Applications is bounded, so that a hostile ApplicationSet cannot run away.
package appset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// DefaultMaxApplications is the bound on generated Applications when a Request
// gives none.
const DefaultMaxApplications = 10000

// LimitPhrase is in every error of an expansion that went past MaxApplications, so
// that a caller reading the error as text (from a render worker) knows it.
const LimitPhrase = "more than the limit of"

// Request is what Generate expands.
type Request struct {
	// AppSet is the ApplicationSet object as decoded from YAML (apiVersion argoproj.io/v1alpha1).
	AppSet map[string]any `json:"appSet"`
	// RepoURLs are the URLs this repository is known by; a git generator whose repoURL is one of them reads FS.
	RepoURLs []string `json:"repoURLs"`
	// Revisions are the revisions that mean the ref being previewed besides "" and "HEAD" (branch names).
	Revisions []string `json:"revisions"`
	// Clusters are the Argo CD cluster Secrets known (read-only copies: name, server, labels, annotations; never credentials).
	Clusters []Cluster `json:"clusters"`
	// MaxApplications bounds how many Applications may be generated (0: a default of 10,000); past it Generate returns an error naming the count.
	// It bounds every generator's parameter sets too (a matrix's product before its selector).
	MaxApplications int `json:"maxApplications"`
	// ClustersUnknown says the caller knows no cluster Secrets (not even that there
	// are none): a clusters generator is then skipped with why, not expanded to the
	// in-cluster alone.
	ClustersUnknown bool `json:"clustersUnknown,omitempty"`
	// NewGitFileGlobbing is the controller's --enable-new-git-file-globbing
	// (ARGOCD_APPLICATIONSET_CONTROLLER_ENABLE_NEW_GIT_FILE_GLOBBING): git files
	// patterns are then doublestar globs instead of git pathspecs. Off by default, as
	// in the controller.
	NewGitFileGlobbing bool `json:"newGitFileGlobbing,omitempty"`
}

// Cluster is an Argo CD cluster Secret as the clusters generator reads it.
type Cluster struct {
	// Name and Server are the Secret's data.name and data.server.
	Name   string `json:"name"`
	Server string `json:"server"`
	// Project is the Secret's data.project ("" when it has none).
	Project string `json:"project,omitempty"`
	// Labels and Annotations are the Secret's. The label
	// argocd.argoproj.io/secret-type: cluster, which every cluster Secret has, is
	// added when missing.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Application is one generated Application.
type Application struct {
	Object map[string]any `json:"object"` // the generated Application (apiVersion/kind set, namespace the ApplicationSet's)
	From   string         `json:"from"`   // "generator 1 (list) item 3", "generator 1 (matrix) item 7"
}

// Result is what an ApplicationSet generates.
type Result struct {
	Applications []Application `json:"applications"`
	// Skipped names generators not expanded and why, and generated Applications the
	// controller would not apply (a name generated twice).
	Skipped []string `json:"skipped"`
}

// skip is returned by a generator drift does not expand; the ApplicationSet's
// other generators still are.
type skip struct{ reason string }

func (s *skip) Error() string { return s.reason }

func skipf(format string, args ...any) error { return &skip{reason: fmt.Sprintf(format, args...)} }

// Generate expands the ApplicationSet reading git generator files from fsys (the repository at the ref previewed).
func Generate(ctx context.Context, fsys fs.FS, req Request) (*Result, error) {
	spec, err := readAppSet(req.AppSet)
	if err != nil {
		return nil, err
	}
	limit := req.MaxApplications
	if limit <= 0 {
		limit = DefaultMaxApplications
	}
	e := &expander{ctx: ctx, fsys: fsys, req: req, spec: spec, max: limit}
	res := &Result{Applications: []Application{}, Skipped: []string{}}
	for i, gen := range spec.Generators {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kinds := kindsOf(gen, topKinds)
		if len(kinds) == 0 {
			res.Skipped = append(res.Skipped, fmt.Sprintf("generator %d: names no generator drift knows (%s)", i+1, strings.Join(sortedKeys(gen), ", ")))
			continue
		}
		for _, kind := range kinds {
			where := fmt.Sprintf("generator %d (%s)", i+1, kind)
			apps, err := e.expand(gen, kind, where, len(res.Applications))
			var s *skip
			if errors.As(err, &s) {
				res.Skipped = append(res.Skipped, where+": "+s.reason)
				continue
			}
			if err != nil {
				return nil, err
			}
			res.Applications = append(res.Applications, apps...)
		}
	}
	res.Applications, res.Skipped = dropUnapplied(res.Applications, res.Skipped)
	return res, nil
}

// expander holds what one Generate call reads.
type expander struct {
	ctx  context.Context
	fsys fs.FS
	req  Request
	spec *appSetSpec
	max  int
	// files are the repository's files, listed once for every git files generator.
	files []string
}

// expand generates the Applications of one kind of a top-level generator: its
// parameter sets rendered into the ApplicationSet's template, merged under the
// generator's own template. already is how many Applications the generators
// before it generate.
func (e *expander) expand(gen map[string]any, kind, where string, already int) ([]Application, error) {
	tmpl, err := mergeGeneratorTemplate(gen[kind], e.spec.Template)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	params, err := e.transform(gen, kind, nil, levelTop)
	if err != nil {
		var s *skip
		if errors.As(err, &s) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if already+len(params) > e.max {
		return nil, fmt.Errorf("%s: the ApplicationSet generates %d Applications, "+LimitPhrase+" %d", where, already+len(params), e.max)
	}
	apps := make([]Application, 0, len(params))
	for j, p := range params {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		from := fmt.Sprintf("%s item %d", where, j+1)
		obj, err := e.renderApplication(tmpl, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		apps = append(apps, Application{Object: obj, From: from})
	}
	return apps, nil
}

// dropUnapplied leaves out the Applications the controller would not apply: one
// without a name, and those whose name another generated Application has too (the
// controller reports them and applies none of them).
func dropUnapplied(apps []Application, skipped []string) ([]Application, []string) {
	byName := map[string][]string{}
	for _, a := range apps {
		n := appName(a.Object)
		byName[n] = append(byName[n], a.From)
	}
	var out []Application
	reported := map[string]bool{}
	for _, a := range apps {
		n := appName(a.Object)
		if n == "" {
			skipped = append(skipped, a.From+": the Application has no name, which the controller cannot apply")
			continue
		}
		if froms := byName[n]; len(froms) > 1 {
			if !reported[n] {
				reported[n] = true
				skipped = append(skipped, fmt.Sprintf("Application %q is generated %d times (%s): the controller applies none of them", n, len(froms), someOf(froms)))
			}
			continue
		}
		out = append(out, a)
	}
	if out == nil {
		out = []Application{}
	}
	return out, skipped
}

func appName(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// normalizeJSON is v as encoding/json decodes it (numbers float64, maps
// map[string]any), a deep copy: the form the controller's typed objects give.
func normalizeJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// someOf names the first three of places, and counts the others: a message stays
// short however many items generate one name.
func someOf(places []string) string {
	if len(places) <= 3 {
		return strings.Join(places, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(places[:3], ", "), len(places)-3)
}
