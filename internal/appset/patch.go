package appset

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// applyTemplatePatch applies a rendered templatePatch (YAML or JSON) to the
// Application as the controller does, a strategic merge patch over argo-cd's
// Application type: metadata by ObjectMeta's patch strategies (finalizers merged
// as a set), everything else merged object by object with lists replaced and
// null deleting (the type declares no strategy below spec). The patch cannot
// change spec.project.
func applyTemplatePatch(app map[string]any, patch string) (map[string]any, error) {
	converted := patch
	if t := strings.TrimSpace(patch); t == "" || t[0] != '{' {
		data, err := yaml.YAMLToJSON([]byte(patch))
		if err != nil {
			return nil, fmt.Errorf("error while converting template to json %q: %w", patch, err)
		}
		converted = string(data)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(converted), &p); err != nil {
		return nil, fmt.Errorf("invalid templatePatch %q: %w", converted, err)
	}
	out := deepCopy(app).(map[string]any)
	for k, pv := range p {
		if k == "metadata" && pv != nil {
			md, err := patchMetadata(out["metadata"], pv)
			if err != nil {
				return nil, fmt.Errorf("error while applying templatePatch template to json %q: %w", converted, err)
			}
			out[k] = md
			continue
		}
		mergeKey(out, k, pv)
	}
	// The patch cannot change the project (the controller's guard).
	spec, _ := app["spec"].(map[string]any)
	project, has := spec["project"]
	outSpec, ok := out["spec"].(map[string]any)
	if !ok {
		outSpec = map[string]any{}
		out["spec"] = outSpec
	}
	if has {
		outSpec["project"] = project
	} else {
		delete(outSpec, "project")
	}
	return out, nil
}

// patchMetadata applies a patch's metadata with apimachinery's strategic merge
// over ObjectMeta.
func patchMetadata(original, patch any) (map[string]any, error) {
	if original == nil {
		original = map[string]any{}
	}
	o, err := json.Marshal(original)
	if err != nil {
		return nil, err
	}
	p, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	data, err := strategicpatch.StrategicMergePatch(o, p, metav1.ObjectMeta{})
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// mergeKey merges a patch's value for key k into obj: null deletes, an object
// merges into an object ($patch: replace replaces it, $patch: delete deletes it),
// anything else replaces.
func mergeKey(obj map[string]any, k string, pv any) {
	if pv == nil {
		delete(obj, k)
		return
	}
	pm, isMap := pv.(map[string]any)
	if !isMap {
		obj[k] = pv
		return
	}
	switch pm["$patch"] {
	case "delete":
		delete(obj, k)
		return
	case "replace":
		obj[k] = dropNulls(withoutDirectives(pm))
		return
	}
	om, ok := obj[k].(map[string]any)
	if !ok {
		obj[k] = dropNulls(withoutDirectives(pm))
		return
	}
	for pk, v := range pm {
		if strings.HasPrefix(pk, "$") {
			continue
		}
		mergeKey(om, pk, v)
	}
}

func withoutDirectives(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, "$") {
			out[k] = v
		}
	}
	return out
}

// dropNulls leaves out the null fields of a new object, as strategic merge does.
func dropNulls(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if x != nil {
			out[k] = dropNulls(x)
		}
	}
	return out
}
