// Package config reads drift.yaml: the targets a repository deploys, and the rules
// that keep noise out of its reports.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// FileName is the configuration file drift looks for at the repository root.
const FileName = "drift.yaml"

// Config is drift.yaml.
type Config struct {
	// Version is the file format; 1 is the only one (and the default).
	Version int `yaml:"version,omitempty" json:"version,omitempty"`
	// Defaults apply to every target that does not say otherwise.
	Defaults Defaults `yaml:"defaults,omitempty" json:"defaults,omitempty"`
	Targets  []Target `yaml:"targets" json:"targets"`
	// Ignore and Mask apply to every target, before the target's own.
	Ignore []IgnoreRule `yaml:"ignore,omitempty" json:"ignore,omitempty"`
	Mask   []MaskRule   `yaml:"mask,omitempty" json:"mask,omitempty"`
	// Ephemeral configures --cluster ephemeral.
	Ephemeral *Ephemeral `yaml:"ephemeral,omitempty" json:"ephemeral,omitempty"`
	// Discover adds the targets the repository's Argo CD and Flux objects define
	// (always on without drift.yaml); a target here with a discovered target's name
	// and no path sets that target's fields.
	Discover bool `yaml:"discover,omitempty" json:"discover,omitempty"`
	// Clusters maps the clusters discovered objects name (an Argo CD destination's
	// name or server, a Flux kubeConfig Secret's name) to kube contexts.
	Clusters map[string]string `yaml:"clusters,omitempty" json:"clusters,omitempty"`
	// ArgoCDClusters are Argo CD cluster Secrets, as an ApplicationSet's clusters
	// generator reads them, beside those of the live cluster and the repository: for
	// a run without the live cluster (--cluster ephemeral, drift targets).
	ArgoCDClusters []ArgoCDCluster `yaml:"argocdClusters,omitempty" json:"argocdClusters,omitempty"`
	// FluxSources are Flux source objects (GitRepository, OCIRepository,
	// HelmRepository) the repository's Kustomizations and HelmReleases name but do not
	// hold, made in the cluster by bootstrap or a FluxInstance: for a run without the
	// live cluster, where drift reads them otherwise.
	FluxSources []map[string]any `yaml:"fluxSources,omitempty" json:"fluxSources,omitempty"`
	// RepoURLs are URLs this repository is known by, beside its git remotes: Argo CD
	// and Flux sources with one of them render from the ref previewed.
	RepoURLs []string `yaml:"repoURLs,omitempty" json:"repoURLs,omitempty"`
	// Charts says where drift may fetch Helm charts from.
	Charts *Charts `yaml:"charts,omitempty" json:"charts,omitempty"`
	// Risks configures the risks reports call out.
	Risks *Risks `yaml:"risks,omitempty" json:"risks,omitempty"`
	// FailOn is the policy: what makes the run fail (FailOnValues), beside errors.
	FailOn []string `yaml:"failOn,omitempty" json:"failOn,omitempty"`
	// DeploysNothing are paths (doublestar globs, or directories) of files that
	// deploy nothing (documentation, CI, Terraform): a change to them is listed in
	// the report's coverage as deploying nothing, never as read by nothing.
	DeploysNothing []string `yaml:"deploysNothing,omitempty" json:"deploysNothing,omitempty"`
}

// ArgoCDCluster is an Argo CD cluster Secret's data and metadata as the clusters
// generator reads them (never its credentials).
type ArgoCDCluster struct {
	Name        string            `yaml:"name" json:"name"`
	Server      string            `yaml:"server" json:"server"`
	Project     string            `yaml:"project,omitempty" json:"project,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// Risks configures the risk rules (docs/report.md#risks).
type Risks struct {
	// Disable lists rules switched off.
	Disable []string `yaml:"disable,omitempty" json:"disable,omitempty"`
}

// FailOnValues are what a policy (--fail-on, failOn) may fail on: an incomplete
// report, a risk, a deletion, any change.
var FailOnValues = []string{"error", "risk", "delete", "change"}

// CheckFailOn validates a policy's values.
func CheckFailOn(values []string) error {
	for _, v := range values {
		if !slices.Contains(FailOnValues, v) {
			return fmt.Errorf("%q is not one of %s", v, strings.Join(FailOnValues, ", "))
		}
	}
	return nil
}

// Charts are the chart repositories drift may fetch from: nothing else is reached.
type Charts struct {
	// Allow lists chart repository URLs (https://… with an index.yaml, or oci://…);
	// a chart is fetched only from one of them or below it: the same scheme, host
	// and port, and the entry's path segments the first of the chart's
	// (internal/chartrepo/repourl).
	Allow []string `yaml:"allow,omitempty" json:"allow,omitempty"`
}

// Ephemeral configures the throwaway API servers of --cluster ephemeral.
type Ephemeral struct {
	// CRDs are files or directories of the repository holding
	// CustomResourceDefinitions the clusters have but the repository does not deploy,
	// loaded into each ephemeral server so that their custom resources are checked.
	CRDs []string `yaml:"crds,omitempty" json:"crds,omitempty"`
}

// Defaults are the settings targets inherit.
type Defaults struct {
	Context      string       `yaml:"context,omitempty" json:"context,omitempty"`
	Namespace    string       `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	FieldManager string       `yaml:"fieldManager,omitempty" json:"fieldManager,omitempty"`
	Applier      applier.Name `yaml:"applier,omitempty" json:"applier,omitempty"`
}

// Target is one thing the repository deploys to one cluster.
type Target struct {
	// Name identifies the target in reports and for --target.
	Name string `yaml:"name" json:"name"`
	// Path is the directory (or plain file) to render, relative to the repository root.
	Path string `yaml:"path" json:"path"`
	// Renderer is plain, kustomize or helm; auto-detected when empty.
	Renderer string `yaml:"renderer,omitempty" json:"renderer,omitempty"`
	// Namespace is given to objects that have none.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Context is the kube context (of the runner's kubeconfig) the target deploys to.
	Context string `yaml:"context,omitempty" json:"context,omitempty"`
	// FieldManager is the manager the real deployment applies with.
	FieldManager string `yaml:"fieldManager,omitempty" json:"fieldManager,omitempty"`
	// ApplySet names the ApplySet parent kubectl apply --applyset creates, when the
	// repository does not render it: [RESOURCE][.GROUP]/NAME (default resource secrets),
	// in the target's namespace.
	ApplySet string `yaml:"applySet,omitempty" json:"applySet,omitempty"`
	// Applier is what applies the target for real: one of applier.Names.
	Applier applier.Name `yaml:"applier,omitempty" json:"applier,omitempty"`
	// ApplyMode is the old name of Applier: server is kubectl-server-side, client
	// is kubectl.
	ApplyMode string `yaml:"applyMode,omitempty" json:"applyMode,omitempty"`
	// Flux names the Kustomization that applies the target (applier flux).
	Flux *FluxTarget `yaml:"flux,omitempty" json:"flux,omitempty"`
	// ArgoCD names the Application that syncs the target (appliers argocd and
	// argocd-server-side).
	ArgoCD *ArgoCDTarget `yaml:"argocd,omitempty" json:"argocd,omitempty"`
	// DryRunAggregatedAPIs sends objects served by aggregated API servers too.
	DryRunAggregatedAPIs bool         `yaml:"dryRunAggregatedAPIs,omitempty" json:"dryRunAggregatedAPIs,omitempty"`
	Helm                 *HelmTarget  `yaml:"helm,omitempty" json:"helm,omitempty"`
	Ignore               []IgnoreRule `yaml:"ignore,omitempty" json:"ignore,omitempty"`
	Mask                 []MaskRule   `yaml:"mask,omitempty" json:"mask,omitempty"`

	line int
}

// Line is where the target starts in drift.yaml (0 when unknown).
func (t Target) Line() int { return t.line }

// HelmTarget holds the options of a Helm target.
type HelmTarget struct {
	ReleaseName      string         `yaml:"releaseName,omitempty" json:"releaseName,omitempty"`
	ReleaseNamespace string         `yaml:"releaseNamespace,omitempty" json:"releaseNamespace,omitempty"`
	ValuesFiles      []string       `yaml:"valuesFiles,omitempty" json:"valuesFiles,omitempty"`
	Values           map[string]any `yaml:"values,omitempty" json:"values,omitempty"`
}

// FluxTarget is the Flux Kustomization a target is applied by.
type FluxTarget struct {
	// Name of the Kustomization (default: the target's name).
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Namespace of the Kustomization (default flux-system).
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}

// ArgoCDTarget is the Argo CD Application a target is synced by.
type ArgoCDTarget struct {
	// Application is its name (default: the target's name).
	Application string `yaml:"application,omitempty" json:"application,omitempty"`
	// Namespace is the Application's namespace when it is not Argo CD's own
	// (apps in any namespace); empty for Argo CD's namespace.
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Tracking is Argo CD's resource tracking method: annotation (Argo CD 3's
	// default), label or annotation+label.
	Tracking string `yaml:"tracking,omitempty" json:"tracking,omitempty"`
	// InstanceLabel is the label key of label tracking (default
	// app.kubernetes.io/instance).
	InstanceLabel string `yaml:"instanceLabel,omitempty" json:"instanceLabel,omitempty"`
}

// ApplierOf is the applier a target names, through the old applyMode too, or the
// default's.
func (t Target) ApplierOf(d Defaults) applier.Name {
	if t.Applier != "" {
		return t.Applier
	}
	if a, ok := applier.FromApplyMode(t.ApplyMode); ok {
		return a
	}
	return d.Applier
}

// Selector picks objects by group, kind, namespace and name; each is a glob
// (path.Match syntax) and an empty one matches everything.
type Selector struct {
	Group     string `yaml:"group,omitempty" json:"group,omitempty"`
	Kind      string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Name      string `yaml:"name,omitempty" json:"name,omitempty"`
}

// IgnoreRule leaves fields of the selected objects out of comparison and output.
type IgnoreRule struct {
	Selector `yaml:",inline" json:",inline"`
	// Paths are JSON pointers (RFC 6901); a "*" segment matches every key or item.
	Paths []string `yaml:"paths,omitempty" json:"paths,omitempty"`
	// Managers ignores every field the named field managers own on the live object.
	Managers []string `yaml:"managers,omitempty" json:"managers,omitempty"`
	// JQ are jq path expressions whose selection is ignored, as Argo CD's
	// ignoreDifferences jqPathExpressions: each is run as del(EXPR) on both sides.
	JQ []string `yaml:"jq,omitempty" json:"jq,omitempty"`
}

// MaskRule shows the values at Paths of the selected objects as ***, as Secrets are.
type MaskRule struct {
	Selector `yaml:",inline" json:",inline"`
	Paths    []string `yaml:"paths" json:"paths"`
}

// Known is what drift.yaml may name that this package does not define: the risk
// rules risks.disable may switch off (internal/risk's, which the caller knows).
type Known struct {
	Risks []string
}

// Parse decodes drift.yaml strictly: unknown keys and wrong types are errors that
// give the line; names it may use are checked against known. file names the file in
// messages.
func Parse(file string, data []byte, known Known) (*Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is empty: list the targets under targets:", file)
		}
		return nil, fmt.Errorf("%s: %s", file, friendly(err))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err == nil {
		lines := targetLines(&doc)
		for i := range cfg.Targets {
			if i < len(lines) {
				cfg.Targets[i].line = lines[i]
			}
		}
	}
	if err := cfg.validate(file, known); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// noKubeconfig explains why drift.yaml cannot name a kubeconfig: the repository is
// content a pull request writes, and a kubeconfig can run programs (exec credential
// plugins) with the job's environment.
const noKubeconfig = "kubeconfig is not read from drift.yaml: a kubeconfig can run programs (exec credential plugins), " +
	"so it must come from the runner, never the repository; pass --kubeconfig or set KUBECONFIG (it may list several files) " +
	"and name each target's context in drift.yaml"

var (
	unknownField = regexp.MustCompile(`field (\S+) not found in type config\.(\w+)`)
	cannotDecode = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)")
)

// friendly rewrites yaml.v3's messages in drift.yaml's terms.
func friendly(err error) string {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = unknownField.ReplaceAllStringFunc(msg, func(m string) string {
		s := unknownField.FindStringSubmatch(m)
		if s[1] == "kubeconfig" {
			return noKubeconfig
		}
		return fmt.Sprintf("unknown key %q in %s (see docs/config.md)", s[1], section(s[2]))
	})
	msg = cannotDecode.ReplaceAllStringFunc(msg, func(m string) string {
		s := cannotDecode.FindStringSubmatch(m)
		if s[2] == "" {
			return fmt.Sprintf("%s where %s is expected", yamlKind(s[1]), goKind(s[3]))
		}
		return fmt.Sprintf("%s %q where %s is expected", yamlKind(s[1]), s[2], goKind(s[3]))
	})
	return msg
}

func section(goType string) string {
	switch goType {
	case "Config":
		return "the top level"
	case "Target":
		return "a target"
	case "HelmTarget":
		return "a target's helm section"
	case "IgnoreRule":
		return "an ignore rule"
	case "MaskRule":
		return "a mask rule"
	case "Defaults":
		return "defaults"
	}
	return goType
}

func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "text"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "int", "float":
		return "a number"
	case "bool":
		return "true/false"
	}
	return tag
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "config."):
		return "a mapping"
	case t == "int":
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	}
	return t
}

// targetLines returns the line of each item under the top-level targets key.
func targetLines(doc *yaml.Node) []int {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "targets" && m.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, item := range m.Content[i+1].Content {
				lines = append(lines, item.Line)
			}
			return lines
		}
	}
	return nil
}

var applySetRef = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

func (c *Config) validate(file string, known Known) error {
	if c.Version != 0 && c.Version != 1 {
		return fmt.Errorf("%s: version %d is not supported: this drift reads version 1", file, c.Version)
	}
	if len(c.Targets) == 0 && !c.Discover {
		return fmt.Errorf("%s: no targets: list at least one under targets:, or set discover: true (see docs/config.md)", file)
	}
	var errs []string
	if err := CheckFailOn(c.FailOn); err != nil {
		errs = append(errs, fmt.Sprintf("%s: failOn: %v", file, err))
	}
	if c.Risks != nil {
		for _, n := range c.Risks.Disable {
			if !slices.Contains(known.Risks, n) {
				errs = append(errs, fmt.Sprintf("%s: risks.disable: unknown risk rule %q (known: %s)", file, n, strings.Join(known.Risks, ", ")))
				break
			}
		}
	}
	if c.Defaults.Applier != "" {
		if _, err := applier.ParseName(string(c.Defaults.Applier)); err != nil {
			errs = append(errs, fmt.Sprintf("%s: defaults: applier %v", file, err))
		}
	}
	seen := map[string]int{}
	for i, t := range c.Targets {
		where := fmt.Sprintf("%s line %d: target %d", file, t.line, i+1)
		if t.line == 0 {
			where = fmt.Sprintf("%s: target %d", file, i+1)
		}
		if t.Name != "" {
			where += " (" + t.Name + ")"
		}
		bad := func(format string, args ...any) { errs = append(errs, where+": "+fmt.Sprintf(format, args...)) }
		switch {
		case t.Name == "":
			bad("name is missing")
		case !targetName.MatchString(t.Name):
			bad("name %q may hold only letters, digits, '.', '_', '-' and '/'", t.Name)
		case seen[t.Name] > 0:
			bad("name %q is already used by target %d", t.Name, seen[t.Name])
		}
		seen[t.Name] = i + 1
		if t.Path == "" && c.Discover {
			// Sets the fields of the discovered target of that name (checked when the
			// targets are discovered).
		} else if err := checkRepoPath(t.Path); err != nil {
			bad("path %s", err)
		}
		switch t.Renderer {
		case "", "plain", "kustomize", "helm":
		default:
			bad("renderer %q is not one of plain, kustomize, helm (or leave it out to detect it)", t.Renderer)
		}
		if t.ApplySet != "" && !applySetRef.MatchString(t.ApplySet) {
			bad("applySet %q is not [RESOURCE][.GROUP]/NAME, as kubectl's --applyset (e.g. configmaps/shop-set)", t.ApplySet)
		}
		switch _, alias := applier.FromApplyMode(t.ApplyMode); {
		case t.ApplyMode != "" && !alias:
			bad("applyMode %q is not server or client (applyMode is the old name of applier: see docs/config.md)", t.ApplyMode)
		case t.ApplyMode != "" && t.Applier != "":
			bad("sets both applier and applyMode, its old name: keep applier")
		}
		if t.Applier != "" {
			if _, err := applier.ParseName(string(t.Applier)); err != nil {
				bad("applier %v", err)
			}
		}
		if a := t.ApplierOf(c.Defaults); t.Flux != nil && a != applier.Flux {
			bad("has flux options but applier %s: set applier: flux", orDefault(a))
		}
		if a := t.ApplierOf(c.Defaults); t.ArgoCD != nil && a != applier.ArgoCD && a != applier.ArgoCDServerSide {
			bad("has argocd options but applier %s: set applier: argocd or argocd-server-side", orDefault(a))
		}
		if t.ArgoCD != nil {
			switch t.ArgoCD.Tracking {
			case "", "annotation", "label", "annotation+label":
			default:
				bad("argocd tracking %q is not annotation, label or annotation+label", t.ArgoCD.Tracking)
			}
		}
		if t.Helm != nil && t.Renderer != "" && t.Renderer != "helm" {
			bad("has helm options but renderer %s", t.Renderer)
		}
		if t.Helm != nil {
			for _, vf := range t.Helm.ValuesFiles {
				if path.IsAbs(vf) {
					bad("helm values file %s is an absolute path: values files must be in the repository, relative to the chart", vf)
				}
			}
		}
		errs = append(errs, checkRules(where, t.Ignore, t.Mask)...)
	}
	errs = append(errs, checkRules(file, c.Ignore, c.Mask)...)
	if c.Charts != nil {
		for _, u := range c.Charts.Allow {
			// The rule drift matches charts' repositories with (internal/chartrepo).
			if _, err := repourl.ParseRepository(u); err != nil {
				errs = append(errs, fmt.Sprintf("%s: charts.allow: %s is not a chart repository URL drift can match (https://host[:port]/path, http://… or oci://…): %v", file, repourl.Redact(u), err))
			}
		}
	}
	for i, src := range c.FluxSources {
		kind, _ := src["kind"].(string)
		md, _ := src["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name == "" || (kind != "GitRepository" && kind != "OCIRepository" && kind != "HelmRepository") {
			errs = append(errs, fmt.Sprintf("%s: fluxSources: entry %d is not a GitRepository, OCIRepository or HelmRepository with a metadata.name", file, i+1))
		}
	}
	for i, ac := range c.ArgoCDClusters {
		if ac.Name == "" || ac.Server == "" {
			errs = append(errs, fmt.Sprintf("%s: argocdClusters: entry %d needs a name and a server, as an Argo CD cluster Secret has", file, i+1))
		}
	}
	for _, key := range sortedKeys(c.Clusters) {
		if c.Clusters[key] == "" {
			errs = append(errs, fmt.Sprintf("%s: clusters: %s maps to no context: give the kube context drift previews it on", file, key))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// checkRepoPath accepts a slash-separated path relative to the repository root that
// stays inside it.
func checkRepoPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("is missing: give the directory to render, relative to the repository root (. for the root)")
	case path.IsAbs(p) || strings.Contains(p, `\`):
		return fmt.Errorf("%s must be relative to the repository root, with / separators", p)
	}
	if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Errorf("%s leads outside the repository", p)
	}
	return nil
}

func checkRules(where string, ignore []IgnoreRule, mask []MaskRule) []string {
	var errs []string
	check := func(kind string, i int, sel Selector, paths []string) {
		for _, g := range []string{sel.Group, sel.Kind, sel.Namespace, sel.Name} {
			if _, err := path.Match(g, ""); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %s rule %d: pattern %q is malformed", where, kind, i+1, g))
			}
		}
		for _, p := range paths {
			if !strings.HasPrefix(p, "/") {
				errs = append(errs, fmt.Sprintf("%s: %s rule %d: path %q is not a JSON pointer: write it as /spec/replicas", where, kind, i+1, p))
			}
		}
	}
	for i, r := range ignore {
		if len(r.Paths) == 0 && len(r.Managers) == 0 && len(r.JQ) == 0 {
			errs = append(errs, fmt.Sprintf("%s: ignore rule %d: give paths, managers or jq", where, i+1))
		}
		check("ignore", i, r.Selector, r.Paths)
	}
	for i, r := range mask {
		if len(r.Paths) == 0 {
			errs = append(errs, fmt.Sprintf("%s: mask rule %d: paths is missing", where, i+1))
		}
		check("mask", i, r.Selector, r.Paths)
	}
	return errs
}

// Matches reports whether the selector picks the object.
func (s Selector) Matches(group, kind, namespace, name string) bool {
	return glob(s.Group, group) && glob(s.Kind, kind) && glob(s.Namespace, namespace) && glob(s.Name, name)
}

func glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// orDefault names a target's applier, saying when it is the default.
func orDefault(a applier.Name) string {
	if a == "" {
		return string(applier.Default) + " (the default)"
	}
	return string(a)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
