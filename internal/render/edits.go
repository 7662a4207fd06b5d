package render

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/reason"
)

// kustomizeSpec builds a kustomize target as its applier builds it: the
// kustomization as written, or edited first (Argo CD's kustomize options, a Flux
// Kustomization's spec); for Flux, over a generated kustomization when the directory
// has none and without kustomize's load restrictions; then a Flux Kustomization's
// postBuild substitution.
func kustomizeSpec(fsys fs.FS, spec Spec) *Result {
	dir := cleanDir(spec.Path)
	restrictions := kustypes.LoadRestrictionsRootOnly
	if spec.AsFlux {
		restrictions = kustypes.LoadRestrictionsNone
		fsys = fluxSource(fsys, spec.FluxIgnore, spec.ArtifactExcludes...)
	}
	kfile := findKustomization(fsys, dir)
	name, generated := kfile, false
	var data []byte
	var err error
	switch {
	case kfile == "" && spec.AsFlux:
		if data, err = fluxKustomization(fsys, dir); err != nil {
			return &Result{Failures: []Failure{{Source: displayDir(dir), Reason: reason.RenderFailed,
				Message: "Flux would not build it either: " + err.Error()}}, Inputs: Inputs{Trees: []string{dir}}}
		}
		name, generated = joinRepo(dir, "kustomization.yaml"), true
	case kfile != "" && spec.Kustomize != nil:
		if data, err = fs.ReadFile(fsys, kfile); err != nil {
			return &Result{Failures: []Failure{{Source: kfile, Reason: reason.RenderFailed, Message: "cannot be read: " + unwrapPathError(err)}},
				Inputs: Inputs{Trees: []string{dir}}}
		}
	}
	if data != nil && spec.Kustomize != nil {
		if data, err = editKustomization(data, spec.Kustomize); err != nil {
			return &Result{Failures: []Failure{{Source: cmp.Or(kfile, displayDir(dir)), Reason: reason.RenderFailed, Message: err.Error()}},
				Inputs: Inputs{Trees: []string{dir}}}
		}
	}
	target := fsys
	if data != nil {
		target = withFile{FS: fsys, name: name, data: data}
	}
	res := kustomize(target, dir, buildOptions{restrictions: restrictions, vars: spec.Substitute, flux: spec.AsFlux, charts: spec.HelmCharts})
	if generated {
		res.Notes = append(res.Notes, fmt.Sprintf("%s has no kustomization file: built as Flux builds it, over a kustomization of its YAML files and of its subdirectories that have one", displayDir(dir)))
		res.Inputs.Trees = append(res.Inputs.Trees, dir)
	}
	return res
}

// editKustomization makes the edits an applier makes to a kustomization before it
// builds it. Argo CD runs `kustomize edit set nameprefix|namesuffix|namespace|image`
// and `kustomize edit add label|annotation --force`, then adds patches and
// components; Flux's generator sets the same fields from a Kustomization's spec
// (targetNamespace, namePrefix, nameSuffix, images, patches, components). Either way
// a set field replaces the kustomization's, an image updates the one of the same name
// (replacing it for Argo CD, merging its fields for Flux: MergeImages) or is added,
// labels and annotations are merged with the given ones winning,
// and patches and components come after the kustomization's own. The kustomization
// is read as strictly as kustomize reads it.
func editKustomization(data []byte, o *KustomizeOptions) ([]byte, error) {
	var k kustypes.Kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("the kustomization cannot be read to apply the applier's edits: %v", err)
	}
	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	if o.Namespace != "" {
		k.Namespace = o.Namespace
	}
	for _, img := range o.Images {
		i := slices.IndexFunc(k.Images, func(im kustypes.Image) bool { return im.Name == img.Name })
		switch {
		case i < 0:
			k.Images = append(k.Images, withoutPreserve(img, kustypes.Image{}))
		case o.MergeImages:
			// Flux: the fields given, the tag and digest as one.
			if img.NewName != "" {
				k.Images[i].NewName = img.NewName
			}
			if img.NewTag != "" || img.Digest != "" {
				k.Images[i].NewTag, k.Images[i].Digest = img.NewTag, img.Digest
			}
		default:
			// kustomize edit set image: the entry replaced, "*" keeping a field.
			k.Images[i] = withoutPreserve(img, k.Images[i])
		}
	}
	for _, r := range o.Replicas {
		if i := slices.IndexFunc(k.Replicas, func(x kustypes.Replica) bool { return x.Name == r.Name }); i >= 0 {
			k.Replicas[i] = r
		} else {
			k.Replicas = append(k.Replicas, r)
		}
	}
	var err error
	if k.CommonLabels, err = addMetadata("label", k.CommonLabels, o.CommonLabels, o.ForceCommonLabels); err != nil {
		return nil, err
	}
	if k.CommonAnnotations, err = addMetadata("annotation", k.CommonAnnotations, o.CommonAnnotations, o.ForceCommonAnnotations); err != nil {
		return nil, err
	}
	k.Patches = append(k.Patches, o.Patches...)
	k.Components = append(k.Components, o.Components...)
	return yaml.Marshal(k)
}

// withoutPreserve is img with each "*" field (kustomize edit set image's "keep it")
// taken from the existing entry old.
func withoutPreserve(img, old kustypes.Image) kustypes.Image {
	if img.NewName == "*" {
		img.NewName = old.NewName
	}
	if img.NewTag == "*" {
		img.NewTag = old.NewTag
	}
	if img.Digest == "*" {
		img.Digest = old.Digest
	}
	return img
}

// addMetadata adds entries to a kustomization's labels or annotations as `kustomize
// edit add label|annotation [--force]` does: an existing key is replaced only with
// force, else it is the error kustomize gives.
func addMetadata(kind string, dst, add map[string]string, force bool) (map[string]string, error) {
	if len(add) == 0 {
		return dst, nil
	}
	out := make(map[string]string, len(dst)+len(add))
	for k, v := range dst {
		out[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(add)) {
		if _, ok := dst[k]; ok && !force {
			return nil, fmt.Errorf("kustomize edit add %s: %s %s already in kustomization file (Argo CD fails the same way; set forceCommon%ss: true on the Application)", kind, kind, k, strings.ToUpper(kind[:1])+kind[1:])
		}
		out[k] = add[k]
	}
	return out, nil
}
