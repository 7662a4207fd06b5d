package render

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/source"
)

// originAnnotation is where kustomize records which file a resource came from.
const originAnnotation = "config.kubernetes.io/origin"

// Kustomize builds the kustomization in dir with kustomize's own library, in
// process, over the snapshot's files. Load restrictions stay root-only and only
// built-in plugins run; the kustomization and everything it includes is checked
// first, and anything that would run code or reach the network is refused (a
// *RefusedError in the result's failures). Each object's Source is the resource file
// it came from when kustomize knows it, else the kustomization.
func Kustomize(fsys fs.FS, dir string) *Result {
	return kustomize(fsys, dir, buildOptions{restrictions: types.LoadRestrictionsRootOnly})
}

// buildOptions say how kustomize builds a target.
type buildOptions struct {
	// restrictions are kustomize's load restrictions.
	restrictions types.LoadRestrictions
	// vars, when not empty, are a Flux Kustomization's postBuild variables,
	// substituted in each resource (postbuild.go).
	vars map[string]string
	// flux builds as kustomize-controller, which does not inflate Helm charts.
	flux bool
	// charts are the fetched archives of helmCharts entries, by chartKey.
	charts map[string]string
}

// kustomize builds dir with kustomize's load restrictions: kustomize build's default
// (RootOnly: a kustomization reads files in or below its own directory), or none, as
// Flux's kustomize-controller builds (any file of the repository); helmCharts are
// inflated in process (helmcharts.go), except for Flux.
func kustomize(fsys fs.FS, dir string, o buildOptions) *Result {
	restrictions, vars := o.restrictions, o.vars
	dir = cleanDir(dir)
	// Until kustomize has run, the whole directory counts as input.
	res := &Result{Inputs: Inputs{Trees: []string{dir}}}
	kfile := findKustomization(fsys, dir)
	if kfile == "" {
		res.Failures = append(res.Failures, Failure{Source: displayDir(dir), Reason: reason.RenderFailed,
			Message: "no kustomization.yaml, kustomization.yml or Kustomization in " + displayDir(dir)})
		return res
	}
	charts, err := checkKustomization(fsys, dir, !o.flux)
	if err != nil {
		why := reason.RenderFailed
		source := kfile
		if re, ok := err.(*RefusedError); ok {
			source = re.File
			if re.Missing {
				err = fmt.Errorf("%s: %s", re.Entry, re.Why)
			} else {
				why = reason.Refused
				err = fmt.Errorf("%s: %s", re.Entry, re.Why)
			}
		}
		res.Failures = append(res.Failures, Failure{Source: source, Reason: why, Message: err.Error()})
		return res
	}

	if err := checkVariables(vars); err != nil {
		res.Failures = append(res.Failures, Failure{Source: kfile, Reason: reason.RenderFailed, Message: err.Error()})
		return res
	}
	var chartInputs Inputs
	if len(charts) > 0 {
		var fails []Failure
		if fsys, chartInputs, fails = inflateCharts(fsys, charts, o.charts); len(fails) > 0 {
			res.Failures = append(res.Failures, fails...)
			res.Inputs.Trees = append(res.Inputs.Trees, chartInputs.Trees...)
			return res
		}
	}
	kfs := newKustFS(fsys)
	userOrigin, err := trackOrigins(fsys, kfs, kfile)
	if err != nil {
		res.Failures = append(res.Failures, Failure{Source: kfile, Reason: reason.RenderFailed, Message: err.Error()})
		return res
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = restrictions
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(kfs, "/"+strings.TrimPrefix(dir, "."))
	files, dirs := kfs.inputs()
	res.Inputs = Inputs{Files: append(files, chartInputs.Files...), Dirs: dirs, Trees: chartInputs.Trees}
	if err != nil {
		why := reason.RenderFailed
		if source.IsOutside(err) {
			why = reason.Refused
		}
		res.Failures = append(res.Failures, Failure{Source: kfile, Reason: why,
			Message: "kustomize build " + displayDir(dir) + " failed: " + err.Error()})
		return res
	}
	for i, r := range m.Resources() {
		source := kfile
		if o, err := r.GetOrigin(); err == nil && o != nil && o.Repo == "" {
			switch {
			case o.Path != "":
				source = joinRepo(dir, o.Path)
			case o.ConfiguredIn != "":
				source = joinRepo(dir, o.ConfiguredIn)
			}
		}
		mp, err := resourceMap(r, vars)
		if err != nil {
			res.Failures = append(res.Failures, Failure{Source: source, Reason: reason.RenderFailed,
				Message: fmt.Sprintf("resource %d of the build (%s %s): %v", i+1, r.GetKind(), r.GetName(), err)})
			continue
		}
		obj := &unstructured.Unstructured{Object: mp}
		if !userOrigin {
			removeAnnotation(obj, originAnnotation)
		}
		if deeperThan(obj.Object, maxNesting) {
			// sigs.k8s.io/yaml's Marshal would refuse it, as the reader would.
			res.Failures = append(res.Failures, Failure{Source: source, ID: KnownID(Object{Obj: obj}), Reason: reason.TooLarge,
				Message: tooDeepMessage(fmt.Sprintf("resource %d of the build", i+1))})
			continue
		}
		// Read back as JSON, as an object of the repository's files is read (the
		// JSON sigs.k8s.io/yaml's Marshal makes before it writes YAML).
		data, err := json.Marshal(obj.Object)
		if err != nil {
			res.Failures = append(res.Failures, Failure{Source: source, Reason: reason.RenderFailed,
				Message: fmt.Sprintf("resource %d of the build cannot be encoded: %v", i+1, err)})
			continue
		}
		objs, fails := decodeDocument(source, 0, data, DefaultMaxDocumentBytes)
		res.Objects = append(res.Objects, objs...)
		res.Failures = append(res.Failures, fails...)
	}
	markDuplicates(res)
	return res
}

// trackOrigins has kustomize record each resource's file (buildMetadata:
// [originAnnotations]) by giving it an amended copy of the root kustomization. It
// reports whether the repository asked for origin annotations itself, in which case
// they stay in the output, as they would be applied.
func trackOrigins(fsys fs.FS, kfs *kustFS, kfile string) (bool, error) {
	data, err := fs.ReadFile(fsys, kfile)
	if err != nil {
		return false, fmt.Errorf("cannot be read: %s", unwrapPathError(err))
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return false, fmt.Errorf("malformed kustomization: %v", err)
	}
	if k == nil {
		k = map[string]any{}
	}
	var meta []any
	if v, ok := k["buildMetadata"].([]any); ok {
		meta = v
	}
	if slices.Contains(meta, any(types.OriginAnnotations)) {
		return true, nil
	}
	k["buildMetadata"] = append(meta, types.OriginAnnotations)
	amended, err := yaml.Marshal(k)
	if err != nil {
		return false, err
	}
	kfs.overrides[kfile] = amended
	return false, nil
}

func removeAnnotation(obj *unstructured.Unstructured, key string) {
	ann := obj.GetAnnotations()
	if _, ok := ann[key]; !ok {
		return
	}
	delete(ann, key)
	if len(ann) == 0 {
		unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
		return
	}
	obj.SetAnnotations(ann)
}

func cleanDir(dir string) string {
	dir = path.Clean("/" + dir)[1:]
	if dir == "" {
		return "."
	}
	return dir
}

func displayDir(dir string) string {
	if dir == "" || dir == "." {
		return "the repository root"
	}
	return dir
}

// resourceMap is a built resource as a map, after postBuild substitution when there
// are variables.
func resourceMap(r *resource.Resource, vars map[string]string) (map[string]any, error) {
	if len(vars) == 0 {
		return r.Map()
	}
	data, ok, err := substituted(r, vars)
	if err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return r.Map()
	}
	var mp map[string]any
	if err := json.Unmarshal(data, &mp); err != nil {
		return nil, err
	}
	return mp, nil
}
