package discover

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// argoNamespace is the namespace Argo CD runs in by default; Applications there are
// known by their name alone.
const argoNamespace = "argocd"

// inCluster reports whether an Argo CD destination is the cluster Argo CD runs in.
func inCluster(dst appDestination) bool {
	return dst.Server == "https://kubernetes.default.svc" || dst.Name == "in-cluster" || (dst.Server == "" && dst.Name == "")
}

// application turns an Application into a target.
func (d *discovery) application(obj *unstructured.Unstructured) Target {
	var app application
	t := Target{Kind: KindApplication, Namespace: obj.GetNamespace(), ObjectName: obj.GetName()}
	t.Name = argoTargetName(t.Namespace, t.ObjectName)
	t.definition = definitionOf(obj)
	if err := fromObject(obj, &app); err != nil {
		t.Refused, t.RefusedReason = fmt.Sprintf("Application %s cannot be read: %v", t.ObjectName, err), reason.Invalid
		return t
	}
	spec := app.Spec
	t.ArgoCD = &config.ArgoCDTarget{Application: t.ObjectName}
	if t.Namespace != "" && t.Namespace != argoNamespace {
		t.ArgoCD.Namespace = t.Namespace
	}
	t.Applier = applier.ArgoCD
	t.DestNamespace = spec.Destination.Namespace
	if !inCluster(spec.Destination) {
		t.Cluster = spec.Destination.Name
		if t.Cluster == "" {
			t.Cluster = spec.Destination.Server
		}
	}
	if sp := spec.SyncPolicy; sp != nil {
		t.Prune = sp.Automated != nil && sp.Automated.Prune
		for _, o := range sp.SyncOptions {
			switch o {
			case "CreateNamespace=true":
				t.CreateNamespace = t.DestNamespace
			case "ServerSideApply=true":
				t.Applier = applier.ArgoCDServerSide
			case "Replace=true":
				t.Notes = append(t.Notes, "syncOptions Replace=true: Argo CD replaces objects (kubectl replace/create), drift previews them as applied")
			}
		}
	}
	for _, id := range spec.IgnoreDifferences {
		t.Ignore = append(t.Ignore, ignoreRule(id))
	}
	sources := spec.Sources
	if spec.Source != nil && len(sources) == 0 {
		sources = []appSource{*spec.Source}
	}
	if len(sources) == 0 {
		t.Refused, t.RefusedReason = fmt.Sprintf("Application %s has no source", t.ObjectName), reason.Invalid
		return t
	}
	refs := map[string]appSource{}
	for _, s := range sources {
		if s.Ref != "" {
			refs[s.Ref] = s
		}
	}
	var skipped []string
	for i, s := range sources {
		if s.Ref != "" && s.Path == "" && s.Chart == "" {
			continue // only values files for the others
		}
		spec, why, err := d.appSourceSpec(app, s, refs)
		switch {
		case err != nil:
			t.Refused = fmt.Sprintf("Application %s source %d: %v", t.ObjectName, i+1, err)
			return t
		case why != "":
			skipped = append(skipped, why)
			continue
		}
		t.Specs = append(t.Specs, spec)
		for _, vf := range spec.Helm.ValuesFiles {
			t.Inputs = append(t.Inputs, path.Join(spec.Path, vf))
		}
	}
	switch {
	case len(t.Specs) == 0:
		t.Skipped = strings.Join(skipped, "; ")
	case len(skipped) > 0:
		t.Notes = append(t.Notes, "not previewed: "+strings.Join(skipped, "; "))
	}
	return t
}

// argoTargetName names an Application's target.
func argoTargetName(ns, name string) string {
	if ns == "" || ns == argoNamespace {
		return KindApplication + "/" + name
	}
	return KindApplication + "/" + ns + "/" + name
}

// appSourceSpec is what one source of an Application renders; why says why it is not
// previewed.
func (d *discovery) appSourceSpec(app application, s appSource, refs map[string]appSource) (render.Spec, string, error) {
	switch {
	case len(s.Plugin) > 0 && string(s.Plugin) != "null":
		return render.Spec{}, "its source uses a config management plugin, which runs programs: drift never runs them", nil
	case s.Chart != "":
		return argoChart(app, s, refs)
	case !d.isThisRepo(s.RepoURL):
		return render.Spec{}, fmt.Sprintf("its source is %s, not this repository", s.RepoURL), nil
	case !d.isPreviewedRevision(s.TargetRevision):
		return render.Spec{}, fmt.Sprintf("its source follows revision %s of this repository, not the one previewed", s.TargetRevision), nil
	}
	spec := render.Spec{Path: repoPath(s.Path)}
	switch {
	case s.Helm != nil:
		spec.Renderer = render.RendererHelm
	case s.Kustomize != nil:
		spec.Renderer = render.RendererKustomize
	case s.Directory != nil:
		spec.Renderer = render.RendererPlain
	default:
		spec.Renderer = render.Detect(d.fsys, spec.Path)
	}
	switch spec.Renderer {
	case render.RendererHelm:
		h, err := argoHelm(app, s, refs)
		if err != nil {
			return spec, "", err
		}
		spec.Helm = h
	case render.RendererKustomize:
		if s.Kustomize != nil {
			k, err := argoKustomize(*s.Kustomize)
			if err != nil {
				return spec, "", err
			}
			spec.Kustomize = k
		}
	case render.RendererPlain:
		if s.Directory != nil && len(s.Directory.Jsonnet) > 0 && string(s.Directory.Jsonnet) != "null" && string(s.Directory.Jsonnet) != "{}" {
			return spec, "", fmt.Errorf("directory.jsonnet is set: drift does not render jsonnet")
		}
		dir := render.DirectoryOptions{}
		if s.Directory != nil {
			dir = render.DirectoryOptions{Recurse: s.Directory.Recurse, Include: s.Directory.Include, Exclude: s.Directory.Exclude}
		}
		spec.Directory = &dir
	}
	return spec, "", nil
}

// argoChart is a source of a chart repository or registry: the chart fetched (by the
// render cache, from the repositories drift.yaml allows) at targetRevision, with the
// source's Helm options; values files from a ref source of this repository ($ref/…)
// or of the chart itself.
func argoChart(app application, s appSource, refs map[string]appSource) (render.Spec, string, error) {
	repoURL := s.RepoURL
	if !strings.Contains(repoURL, "://") {
		repoURL = "oci://" + repoURL // Argo CD's OCI Helm repositories are written without a scheme
	}
	h, err := argoHelm(app, s, refs)
	if err != nil {
		return render.Spec{}, "", err
	}
	h.Chart = &render.ChartRef{RepoURL: repoURL, Name: s.Chart, Version: s.TargetRevision}
	return render.Spec{Renderer: render.RendererHelm, Helm: h}, "", nil
}

// argoHelm is a Helm source's options as Argo CD passes them to helm template: the
// value files in order, then values (or valuesObject) over them, then parameters as
// --set; the release named as the Application unless releaseName says otherwise, in
// the destination's namespace.
func argoHelm(app application, s appSource, refs map[string]appSource) (render.HelmOptions, error) {
	h := render.HelmOptions{ReleaseName: app.Metadata.Name, ReleaseNamespace: app.Spec.Destination.Namespace}
	if s.Helm == nil {
		return h, nil
	}
	ah := s.Helm
	if ah.ReleaseName != "" {
		h.ReleaseName = ah.ReleaseName
	}
	if ah.Namespace != "" {
		h.ReleaseNamespace = ah.Namespace
	}
	chartDir := repoPath(s.Path)
	for _, vf := range ah.ValueFiles {
		if s.Chart != "" && !strings.HasPrefix(vf, "$") {
			// A file of the fetched chart itself.
			h.ValuesFiles = append(h.ValuesFiles, render.ChartValuesPrefix+vf)
			continue
		}
		p, err := argoValuesFile(vf, chartDir, refs)
		if err != nil {
			return h, err
		}
		h.ValuesFiles = append(h.ValuesFiles, p)
	}
	values := map[string]any{}
	switch {
	case ah.ValuesObject != nil:
		values = ah.ValuesObject
	case strings.TrimSpace(ah.Values) != "":
		if err := yaml.Unmarshal([]byte(ah.Values), &values); err != nil {
			return h, fmt.Errorf("helm.values is not YAML: %v", err)
		}
	}
	for _, p := range ah.Parameters {
		if err := setValue(values, p.Name, p.Value, p.ForceString); err != nil {
			return h, fmt.Errorf("helm parameter %s: %v", p.Name, err)
		}
	}
	if len(ah.FileParameters) > 0 {
		return h, fmt.Errorf("helm.fileParameters read files at render time: drift does not support them yet")
	}
	if len(values) > 0 {
		h.Values = values
	}
	return h, nil
}

// argoValuesFile turns an Argo CD value file into a path relative to the chart: as
// written, or $ref/path from a ref source of this repository.
func argoValuesFile(vf, chartDir string, refs map[string]appSource) (string, error) {
	if strings.HasPrefix(vf, "http://") || strings.HasPrefix(vf, "https://") {
		return "", fmt.Errorf("value file %s is a URL: drift reads value files from the repository only", vf)
	}
	if strings.HasPrefix(vf, "$") {
		name, rest, _ := strings.Cut(strings.TrimPrefix(vf, "$"), "/")
		if _, ok := refs[name]; !ok {
			return "", fmt.Errorf("value file %s names ref %s, which no source of the Application defines", vf, name)
		}
		return relPath(chartDir, rest), nil
	}
	return vf, nil
}

// relPath is the path of repository file target relative to the directory from.
func relPath(from, target string) string {
	from, target = repoPath(from), repoPath(target)
	if from == "" {
		return target
	}
	ups := strings.Count(from, "/") + 1
	return strings.Repeat("../", ups) + target
}

// argoKustomize is a kustomize source's options as Argo CD's `kustomize edit` calls
// make them.
func argoKustomize(k appKustomize) (*render.KustomizeOptions, error) {
	out := &render.KustomizeOptions{
		NamePrefix: k.NamePrefix, NameSuffix: k.NameSuffix, Namespace: k.Namespace,
		CommonLabels: k.CommonLabels, CommonAnnotations: k.CommonAnnotations, Components: k.Components,
		ForceCommonLabels: k.ForceCommonLabels, ForceCommonAnnotations: k.ForceCommonAnnotations,
	}
	for _, s := range k.Images {
		img, err := parseImage(s)
		if err != nil {
			return nil, fmt.Errorf("kustomize image %q: %v", s, err)
		}
		out.Images = append(out.Images, img)
	}
	for _, p := range k.Patches {
		kp := kustypes.Patch{Path: p.Path, Patch: p.Patch}
		if len(p.Options) > 0 {
			kp.Options = &kustypes.PatchArgs{AllowNameChange: p.Options["allowNameChange"], AllowKindChange: p.Options["allowKindChange"]}
		}
		if p.Target != nil {
			kp.Target = &kustypes.Selector{ResId: resID(p.Target.Group, p.Target.Version, p.Target.Kind, p.Target.Name, p.Target.Namespace),
				LabelSelector: p.Target.LabelSelector, AnnotationSelector: p.Target.AnnotationSelector}
		}
		out.Patches = append(out.Patches, kp)
	}
	for _, raw := range k.Replicas {
		// Argo CD's count is a number or a string of one (intstr).
		var r struct {
			Name  string          `json:"name"`
			Count json.RawMessage `json:"count"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("kustomize.replicas: %v", err)
		}
		n, err := strconv.ParseInt(strings.Trim(string(r.Count), `"`), 10, 64)
		if err != nil || r.Name == "" {
			return nil, fmt.Errorf("kustomize.replicas entry %s: give a name and a whole count", raw)
		}
		out.Replicas = append(out.Replicas, kustypes.Replica{Name: r.Name, Count: n})
	}
	return out, nil
}

// ignoreRule is an ignoreDifferences entry as a drift ignore rule.
func ignoreRule(id ignoreDiff) config.IgnoreRule {
	return config.IgnoreRule{
		Selector: config.Selector{Group: id.Group, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name},
		Paths:    id.JSONPointers, Managers: id.ManagedFieldsManagers, JQ: id.JQPathExpressions,
	}
}

// isThisRepo reports whether a source URL is this repository.
func (d *discovery) isThisRepo(u string) bool {
	n := normalURL(u)
	for _, r := range d.opts.RepoURLs {
		if normalURL(r) == n {
			return true
		}
	}
	return false
}

// isPreviewedRevision reports whether a target revision follows the ref previewed.
func (d *discovery) isPreviewedRevision(rev string) bool {
	if rev == "" || rev == "HEAD" {
		return true
	}
	for _, r := range d.opts.Revisions {
		if r == rev || "refs/heads/"+r == rev {
			return true
		}
	}
	return false
}

// normalURL compares git URLs: scheme, user, .git suffix, trailing slash and case of
// the host set aside; scp-like git@host:path is host/path.
func normalURL(u string) string {
	u = strings.TrimSpace(u)
	for _, p := range []string{"https://", "http://", "ssh://", "git://", "git+ssh://"} {
		if strings.HasPrefix(strings.ToLower(u), p) {
			u = u[len(p):]
			break
		}
	}
	if at := strings.Index(u, "@"); at >= 0 && at < strings.IndexAny(u+"/", "/:") {
		u = u[at+1:]
	}
	host, rest, found := strings.Cut(u, "/")
	if h, p, ok := strings.Cut(host, ":"); ok && !isPort(p) {
		host, rest, found = h, p+"/"+rest, true
	} else if ok {
		host = h
	}
	if !found {
		rest = ""
	}
	rest = strings.TrimSuffix(strings.TrimSuffix(rest, "/"), ".git")
	return strings.ToLower(host) + "/" + strings.TrimSuffix(rest, "/")
}

func isPort(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// repoPath is a source path as a repository path ("" the root).
func repoPath(p string) string {
	p = path.Clean("/" + strings.TrimSpace(p))[1:]
	return p
}

// definitionOf is what tells two definitions of one object apart: its spec.
func definitionOf(obj *unstructured.Unstructured) string {
	b, _ := json.Marshal(obj.Object["spec"])
	return string(b)
}

// fromObject decodes an object into one of the structs above.
func fromObject(obj *unstructured.Unstructured, v any) error {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// sortedKeys are a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
