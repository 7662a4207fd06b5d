package discover

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// fluxTargetName names a Flux object's target: Kind/namespace/name, or Kind/name
// for one that names no namespace.
func fluxTargetName(kind, ns, name string) string {
	if ns == "" {
		return kind + "/" + name
	}
	return kind + "/" + ns + "/" + name
}

// withoutNamespace refuses a Flux object that names no namespace, as
// kustomize-controller refuses to apply it: its server-side dry run finds no
// namespace to apply it in ("namespace not specified", fluxcd/pkg/ssa), and the
// Kustomization that holds it applies nothing. What applies it with a namespace
// (kustomize's namespace, a Kustomization's targetNamespace, an Argo CD
// destination, a release's namespace) gave it one already.
//
// Found in a file nothing drift reads applies (the Kustomization that does may read
// another source, or one drift cannot map to the repository), its namespace is not
// known: it is skipped, saying so, rather than refused.
func (d *discovery) withoutNamespace(t *Target) bool {
	if t.Namespace != "" {
		return false
	}
	if d.unapplied {
		t.namespaceUnknown = true
		t.Skipped = fmt.Sprintf("%s %s has no metadata.namespace, and drift finds nothing that applies it to say which (the Kustomization that applies it may read another source, or one drift does not map to the repository): its namespace is not known", t.Kind, t.ObjectName)
		return true
	}
	t.Refused = fmt.Sprintf("%s %s has no metadata.namespace, and nothing that applies it gives it one (a kustomization's namespace, the applying Kustomization's targetNamespace): "+
		"kustomize-controller refuses it, and everything applied with it, as \"namespace not specified\"; set metadata.namespace", t.Kind, t.ObjectName)
	t.RefusedReason = reason.Invalid
	return true
}

// kustomization turns a Flux Kustomization into a target: its path built as
// kustomize-controller builds it, with the spec's edits and postBuild substitution.
func (d *discovery) kustomization(obj *unstructured.Unstructured) Target {
	ns := obj.GetNamespace()
	t := Target{Kind: KindKustomization, Namespace: ns, ObjectName: obj.GetName(), Applier: applier.Flux,
		Name: fluxTargetName(KindKustomization, ns, obj.GetName()), definition: definitionOf(obj),
		Flux: &config.FluxTarget{Name: obj.GetName(), Namespace: ns}}
	if d.withoutNamespace(&t) {
		return t
	}
	var k fluxKustomization
	if err := fromObject(obj, &k); err != nil {
		t.Refused, t.RefusedReason = fmt.Sprintf("Kustomization %s cannot be read: %v", objectName(ns, t.ObjectName), err), reason.Invalid
		return t
	}
	s := k.Spec
	t.Cluster = kubeConfigKey(s.KubeConfig)
	t.Prune = s.Prune
	t.DestNamespace = s.TargetNamespace
	t.DependsOn = dependsOn(KindKustomization, ns, s.DependsOn)
	if s.Suspend {
		t.Skipped, t.ByController = "it is suspended: Flux does not apply it", true
		return t
	}
	if why, err := d.fluxSource(&t, s.SourceRef, ns); err != nil || why != "" {
		t.Skipped, t.Refused, t.RefusedReason = why, errText(err), reason.Unavailable
		if d.sourceUnknown {
			t.Unconfirmed = []string{repoPath(s.Path)}
		}
		return t
	}
	spec := render.Spec{Path: repoPath(path.Join(d.artifactPrefix, s.Path)), Renderer: render.RendererKustomize, AsFlux: true, FluxIgnore: d.sourceIgnore, ArtifactExcludes: d.artifactExcludes}
	if s.Decryption != nil {
		spec.Decrypt = s.Decryption.Provider
	}
	if s.TargetNamespace != "" || s.NamePrefix != "" || s.NameSuffix != "" || len(s.Patches) > 0 || len(s.Images) > 0 || len(s.Components) > 0 {
		ko := &render.KustomizeOptions{Namespace: s.TargetNamespace, NamePrefix: s.NamePrefix, NameSuffix: s.NameSuffix, Components: s.Components, MergeImages: true}
		for _, p := range s.Patches {
			kp := kustypes.Patch{Patch: p.Patch}
			if p.Target != nil {
				kp.Target = &kustypes.Selector{ResId: resID(p.Target.Group, p.Target.Version, p.Target.Kind, p.Target.Name, p.Target.Namespace),
					LabelSelector: p.Target.LabelSelector, AnnotationSelector: p.Target.AnnotationSelector}
			}
			ko.Patches = append(ko.Patches, kp)
		}
		for _, img := range s.Images {
			ko.Images = append(ko.Images, kustypes.Image{Name: img.Name, NewName: img.NewName, NewTag: img.NewTag, Digest: img.Digest})
		}
		spec.Kustomize = ko
	}
	if s.CommonMetadata != nil {
		t.Notes = append(t.Notes, "commonMetadata is not applied by drift: its labels and annotations are missing from the preview")
	}
	if pb := s.PostBuild; pb != nil {
		vars := map[string]string{}
		for _, ref := range pb.SubstituteFrom {
			data, file, missing, note, err := d.input(ref.Kind, ns, ref.Name)
			if note != "" {
				t.Notes = append(t.Notes, "postBuild.substituteFrom: Secret "+note)
			}
			switch {
			case err != nil:
				t.Refused, t.RefusedReason = "postBuild.substituteFrom: "+err.Error(), inputReason(err)
				return t
			case missing != "" && ref.Optional:
				t.Notes = append(t.Notes, "postBuild.substituteFrom names "+missing+": it is optional, and Flux goes without it too")
				continue
			case missing != "":
				t.Refused, t.RefusedReason = "postBuild.substituteFrom names "+missing+" (mark it optional: true if Flux may go without it)", reason.NotFound
				return t
			}
			for _, key := range sortedKeys(data) {
				vars[key] = data[key]
				if ref.Kind == "Secret" && data[key] != placeholderPrefix+key {
					d.secrets = append(d.secrets, data[key])
				}
			}
			if file != "" {
				t.Inputs = append(t.Inputs, file)
			}
		}
		for _, key := range sortedKeys(pb.Substitute) {
			vars[key] = pb.Substitute[key]
		}
		spec.Substitute = vars
	}
	t.Specs = []render.Spec{spec}
	return t
}

// helmRelease turns a Flux HelmRelease into a target: its chart rendered as
// helm-controller installs or upgrades it.
func (d *discovery) helmRelease(obj *unstructured.Unstructured) Target {
	ns := obj.GetNamespace()
	t := Target{Kind: KindHelmRelease, Namespace: ns, ObjectName: obj.GetName(), Applier: applier.Helm,
		Name: fluxTargetName(KindHelmRelease, ns, obj.GetName()), definition: definitionOf(obj)}
	if d.withoutNamespace(&t) {
		return t
	}
	var hr fluxHelmRelease
	if err := fromObject(obj, &hr); err != nil {
		t.Refused, t.RefusedReason = fmt.Sprintf("HelmRelease %s cannot be read: %v", objectName(ns, t.ObjectName), err), reason.Invalid
		return t
	}
	s := hr.Spec
	t.Cluster = kubeConfigKey(s.KubeConfig)
	t.DependsOn = dependsOn(KindHelmRelease, ns, s.DependsOn)
	t.Prune = true // an upgrade deletes what the chart no longer renders
	relNS := cmp.Or(s.TargetNamespace, ns)
	t.DestNamespace = relNS
	opts := render.HelmOptions{ReleaseName: helmReleaseName(s.ReleaseName, s.TargetNamespace, obj.GetName()), ReleaseNamespace: relNS}
	if s.Install != nil && s.Install.CreateNamespace {
		t.CreateNamespace = relNS
	}
	if len(s.PostRenderers) > 0 {
		t.Notes = append(t.Notes, "postRenderers are not applied by drift: what they patch is previewed as the chart renders it")
	}
	if s.StorageNamespace != "" && s.StorageNamespace != relNS {
		t.Notes = append(t.Notes, fmt.Sprintf("the release is stored in namespace %s: drift reads the deployed revision from %s", s.StorageNamespace, relNS))
	}
	if s.Suspend {
		t.Skipped, t.ByController = "it is suspended: Flux does not upgrade it", true
		return t
	}
	var chartDir string
	switch {
	case s.ChartRef != nil:
		ref, err := d.ociRepositoryChart(&t, *s.ChartRef, ns)
		if err != nil {
			t.Refused = err.Error()
			return t
		}
		opts.Chart = ref
	case s.Chart == nil:
		t.Refused, t.RefusedReason = fmt.Sprintf("HelmRelease %s has neither chart nor chartRef", objectName(ns, t.ObjectName)), reason.Invalid
		return t
	case s.Chart.Spec.SourceRef.Kind == "HelmRepository":
		ref, err := d.helmRepositoryChart(&t, s.Chart.Spec.SourceRef, ns, s.Chart.Spec.Chart, s.Chart.Spec.Version)
		if err != nil {
			t.Refused = err.Error()
			return t
		}
		opts.Chart = ref
		vfs := s.Chart.Spec.ValuesFiles
		if s.Chart.Spec.ValuesFile != "" && len(vfs) == 0 {
			vfs = []string{s.Chart.Spec.ValuesFile}
		}
		for _, vf := range vfs {
			// Files of the fetched chart itself.
			opts.ValuesFiles = append(opts.ValuesFiles, render.ChartValuesPrefix+vf)
		}
		// source-controller packages the chart with them as its values.yaml.
		opts.ReplaceChartValues = len(vfs) > 0
	case s.Chart.Spec.SourceRef.Kind != "GitRepository":
		ref := s.Chart.Spec.SourceRef
		t.Skipped = fmt.Sprintf("its chart %s %s comes from %s %s, which drift does not read", s.Chart.Spec.Chart, s.Chart.Spec.Version, ref.Kind, objectName(cmp.Or(ref.Namespace, ns), ref.Name))
		return t
	default:
		if why, err := d.fluxSource(&t, s.Chart.Spec.SourceRef, ns); err != nil || why != "" {
			t.Skipped, t.Refused, t.RefusedReason = why, errText(err), reason.Unavailable
			if d.sourceUnknown {
				t.Unconfirmed = []string{repoPath(s.Chart.Spec.Chart)}
			}
			return t
		}
		chartDir = repoPath(s.Chart.Spec.Chart)
		vfs := s.Chart.Spec.ValuesFiles
		if s.Chart.Spec.ValuesFile != "" && len(vfs) == 0 {
			vfs = []string{s.Chart.Spec.ValuesFile}
		}
		for _, vf := range vfs {
			// Flux's values files are paths in the source, not in the chart.
			opts.ValuesFiles = append(opts.ValuesFiles, relPath(chartDir, vf))
			t.Inputs = append(t.Inputs, repoPath(vf))
		}
		// source-controller packages the chart with them as its values.yaml.
		opts.ReplaceChartValues = len(vfs) > 0
	}
	values := map[string]any{}
	for _, ref := range s.ValuesFrom {
		data, file, missing, note, err := d.input(ref.Kind, ns, ref.Name)
		if note != "" {
			t.Notes = append(t.Notes, "valuesFrom: Secret "+note)
		}
		switch {
		case err != nil:
			t.Refused, t.RefusedReason = "valuesFrom: "+err.Error(), inputReason(err)
			return t
		case missing != "" && ref.Optional:
			t.Notes = append(t.Notes, "valuesFrom names "+missing+": it is optional, and Flux goes without it too")
			continue
		case missing != "":
			t.Refused, t.RefusedReason = "valuesFrom names "+missing+" (mark it optional: true if Flux may go without it)", reason.NotFound
			return t
		}
		key := cmp.Or(ref.ValuesKey, "values.yaml")
		v, has := data[key]
		if !has {
			if ref.Optional {
				continue
			}
			t.Refused, t.RefusedReason = fmt.Sprintf("valuesFrom: %s %s has no key %s", ref.Kind, objectName(ns, ref.Name), key), reason.NotFound
			return t
		}
		if v == placeholderPrefix+key {
			continue // an encrypted Secret drift cannot read: left out, as the note says
		}
		if ref.Kind == "Secret" {
			d.secrets = append(d.secrets, v)
		}
		if file != "" {
			t.Inputs = append(t.Inputs, file)
		}
		if ref.TargetPath != "" {
			if err := setValue(values, ref.TargetPath, v, false); err != nil {
				t.Refused, t.RefusedReason = fmt.Sprintf("valuesFrom %s %s targetPath %s: %v", ref.Kind, ref.Name, ref.TargetPath, err), reason.Invalid
				return t
			}
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(v), &m); err != nil {
			t.Refused, t.RefusedReason = fmt.Sprintf("valuesFrom %s %s key %s is not YAML", ref.Kind, objectName(ns, ref.Name), key), reason.Invalid
			return t
		}
		values = mergeMaps(values, m)
	}
	values = mergeMaps(values, s.Values)
	if len(values) > 0 {
		opts.Values = values
	}
	t.Specs = []render.Spec{{Path: chartDir, Renderer: render.RendererHelm, Helm: opts}}
	return t
}

// helmRepositoryChart is a chart of a Flux HelmRepository the repository holds: its
// URL (oci:// for type oci), the chart's name and version (Flux's default is "*", the
// latest: a range).
func (d *discovery) helmRepositoryChart(t *Target, src crossRef, ns, chart, version string) (*render.ChartRef, error) {
	srcNS := cmp.Or(src.Namespace, ns)
	o, ok, err := d.source("HelmRepository", srcNS, src.Name)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("its chart comes from HelmRepository %s, which neither the repository, drift.yaml's fluxSources nor the cluster holds", objectName(srcNS, src.Name))
	}
	var hr struct {
		Spec struct {
			URL  string `json:"url"`
			Type string `json:"type"`
		} `json:"spec"`
	}
	if err := fromObject(o.Get(), &hr); err != nil || hr.Spec.URL == "" {
		return nil, fmt.Errorf("HelmRepository %s (%s) has no URL", objectName(srcNS, src.Name), o.Where())
	}
	if o.Source != "" {
		t.Inputs = append(t.Inputs, o.Source)
	}
	return &render.ChartRef{RepoURL: hr.Spec.URL, Name: chart, Version: cmp.Or(version, "*")}, nil
}

// ociRepositoryChart is the chart of a Flux OCIRepository the repository holds: its
// URL names the chart, its ref the tag or semver range.
func (d *discovery) ociRepositoryChart(t *Target, src crossRef, ns string) (*render.ChartRef, error) {
	srcNS := cmp.Or(src.Namespace, ns)
	if src.Kind != "OCIRepository" {
		return nil, fmt.Errorf("chartRef %s %s is not read by drift (only OCIRepository)", src.Kind, objectName(srcNS, src.Name))
	}
	o, ok, err := d.source("OCIRepository", srcNS, src.Name)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("its chart comes from OCIRepository %s, which neither the repository, drift.yaml's fluxSources nor the cluster holds", objectName(srcNS, src.Name))
	}
	var or struct {
		Spec struct {
			URL string `json:"url"`
			Ref struct {
				Tag    string `json:"tag"`
				Semver string `json:"semver"`
				Digest string `json:"digest"`
			} `json:"ref"`
		} `json:"spec"`
	}
	if err := fromObject(o.Get(), &or); err != nil || !strings.HasPrefix(or.Spec.URL, "oci://") {
		return nil, fmt.Errorf("OCIRepository %s (%s) has no oci:// URL", objectName(srcNS, src.Name), o.Where())
	}
	if o.Source != "" {
		t.Inputs = append(t.Inputs, o.Source)
	}
	if or.Spec.Ref.Digest != "" {
		return nil, fmt.Errorf("OCIRepository %s pins a digest, which drift does not fetch by yet: pin a tag", objectName(srcNS, src.Name))
	}
	u := strings.TrimSuffix(or.Spec.URL, "/")
	i := strings.LastIndex(u, "/")
	return &render.ChartRef{RepoURL: u[:i], Name: u[i+1:], Version: cmp.Or(or.Spec.Ref.Tag, or.Spec.Ref.Semver, "latest")}, nil
}

// helmReleaseName is the release helm-controller installs: releaseName, else the
// HelmRelease's name after its target namespace, shortened past Helm's 53
// characters as helm-controller shortens it.
func helmReleaseName(releaseName, targetNS, name string) string {
	n := releaseName
	if n == "" {
		n = name
		if targetNS != "" {
			n = targetNS + "-" + name
		}
	}
	if len(n) <= 53 {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return n[:40] + "-" + hex.EncodeToString(sum[:])[:12]
}

// fluxSource says why a Flux source is not this repository at the ref previewed
// ("" when it is); the source's file is one of the target's inputs, and its
// spec.ignore is left in d.sourceIgnore for the build. A GitRepository is this repository when its URL is, or when it is
// the flux-system GitRepository flux bootstrap writes into the repository it syncs.
func (d *discovery) fluxSource(t *Target, ref crossRef, ns string) (string, error) {
	d.sourceIgnore, d.sourceUnknown, d.artifactPrefix, d.artifactExcludes = "", false, "", nil
	refNS := cmp.Or(ref.Namespace, ns)
	if ref.Kind == "ExternalArtifact" {
		return d.externalArtifact(t, ref, refNS)
	}
	if ref.Kind != "GitRepository" {
		// An artifact (OCIRepository, Bucket, ExternalArtifact) is often built from
		// this repository's files.
		d.sourceUnknown = true
		return fmt.Sprintf("its source is %s %s, not this repository", ref.Kind, objectName(refNS, ref.Name)), nil
	}
	o, ok, err := d.source("GitRepository", refNS, ref.Name)
	if err != nil {
		d.sourceUnknown = true
		return "", err
	}
	if !ok {
		d.sourceUnknown = true
		return fmt.Sprintf("its source GitRepository %s is neither in the repository nor in the cluster, so drift cannot tell it is this one (name it in drift.yaml's fluxSources, with its URL)", objectName(refNS, ref.Name)), nil
	}
	if o.Source != "" {
		t.Inputs = append(t.Inputs, o.Source)
	}
	var g gitRepository
	if err := fromObject(o.Get(), &g); err != nil {
		return fmt.Sprintf("its source GitRepository %s cannot be read (%s): %v", objectName(refNS, ref.Name), o.Where(), err), nil
	}
	d.sourceIgnore = g.Spec.Ignore
	bootstrap := ref.Name == "flux-system" && refNS == "flux-system" && o.Source != ""
	if !bootstrap && !d.isThisRepo(g.Spec.URL) {
		return fmt.Sprintf("its source GitRepository %s is %s, not this repository (if it is, add the URL to drift.yaml's repoURLs)", objectName(refNS, ref.Name), g.Spec.URL), nil
	}
	if r := g.Spec.Ref; r != nil {
		switch {
		case r.Commit != "":
			return fmt.Sprintf("its source GitRepository %s is pinned to commit %s, not the one previewed", objectName(refNS, ref.Name), r.Commit), nil
		case r.Tag != "", r.Semver != "":
			return fmt.Sprintf("its source GitRepository %s follows tag %s, not the ref previewed", objectName(refNS, ref.Name), cmp.Or(r.Tag, r.Semver)), nil
		case r.Name != "" && !d.isPreviewedRevision(r.Name):
			return fmt.Sprintf("its source GitRepository %s follows %s, not the ref previewed", objectName(refNS, ref.Name), r.Name), nil
		case r.Branch != "" && !d.isPreviewedRevision(r.Branch):
			return fmt.Sprintf("its source GitRepository %s follows branch %s, not the ref previewed", objectName(refNS, ref.Name), r.Branch), nil
		}
	}
	return "", nil
}

// kubeConfigKey is the cluster key of a Flux object's kubeConfig ("" none).
func kubeConfigKey(k *kubeConfigRef) string {
	switch {
	case k == nil:
		return ""
	case k.SecretRef != nil:
		return k.SecretRef.Name
	case k.ConfigMapRef != nil:
		return k.ConfigMapRef.Name
	}
	return ""
}

// dependsOn names the targets of a Flux object's dependencies (of its own kind).
func dependsOn(kind, ns string, refs []crossRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, fluxTargetName(kind, cmp.Or(r.Namespace, ns), r.Name))
	}
	return out
}

// mergeMaps merges src over dst, maps deeply, as Helm and helm-controller merge
// values.
func mergeMaps(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// inputReason is the reason of an error reading a ConfigMap or Secret a definition
// reads: reading it from the cluster failed (unavailable), or it is not what Flux
// reads (invalid).
func inputReason(err error) reason.Reason {
	if errors.Is(err, errLiveRead) {
		return reason.Unavailable
	}
	return reason.Invalid
}

// errText is an error's message ("" for none).
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
