package risk

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/object"
)

// gk is the object's group and kind: "apps/Deployment", or "Service" for the core group.
func gk(c Change) string {
	if c.ID.Group == "" {
		return c.ID.Kind
	}
	return c.ID.Group + "/" + c.ID.Kind
}

// podSpec is the pod spec an object of a workload kind holds, or nil.
func podSpec(id object.ID, obj map[string]any) map[string]any {
	var path []string
	switch gk(Change{ID: id}) {
	case "Pod":
		path = []string{"spec"}
	case "batch/CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	case "apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "ReplicationController", "batch/Job":
		path = []string{"spec", "template", "spec"}
	default:
		return nil
	}
	v, _ := nested(obj, path...)
	m, _ := v.(map[string]any)
	return m
}

// container is one container of a pod spec, by its list and name.
type container struct {
	list, name string
	spec       map[string]any
}

func containers(spec map[string]any) []container {
	var out []container
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		items, _ := spec[list].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			name, _ := m["name"].(string)
			out = append(out, container{list: list, name: name, spec: m})
		}
	}
	return out
}

func containerByName(spec map[string]any, list, name string) map[string]any {
	for _, c := range containers(spec) {
		if c.list == list && c.name == name {
			return c.spec
		}
	}
	return nil
}

func imageUnpinned(c Change) []string {
	if c.Category != Modify && c.Category != Add {
		return nil
	}
	after := podSpec(c.ID, c.Merged)
	if after == nil {
		return nil
	}
	before := podSpec(c.ID, c.Live)
	var out []string
	for _, ct := range containers(after) {
		img, _ := ct.spec["image"].(string)
		if img == "" {
			continue
		}
		var was string
		if old := containerByName(before, ct.list, ct.name); old != nil {
			was, _ = old["image"].(string)
		}
		if was == img {
			continue
		}
		_, tag, digest := splitImage(img)
		_, oldTag, oldDigest := splitImage(was)
		switch {
		case digest != "":
			continue
		case oldDigest != "":
			out = append(out, fmt.Sprintf("container %s: image %s → %s, off a pinned digest", ct.name, was, img))
		case tag == "latest" && (was == "" || oldTag != "latest"):
			out = append(out, fmt.Sprintf("container %s: image %s: the tag latest changes under it", ct.name, img))
		case tag == "" && (was == "" || oldTag != ""):
			out = append(out, fmt.Sprintf("container %s: image %s has no tag (latest)", ct.name, img))
		}
	}
	return out
}

// splitImage splits a reference into its repository, tag and digest.
func splitImage(ref string) (repo, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		return ref[:i], ref[i+1:], digest
	}
	return ref, "", digest
}

func hostAccess(c Change) []string {
	if c.Category != Modify && c.Category != Add {
		return nil
	}
	after := podSpec(c.ID, c.Merged)
	if after == nil {
		return nil
	}
	before := podSpec(c.ID, c.Live)
	var out []string
	for _, f := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if on(after, f) && !on(before, f) {
			out = append(out, f+" turned on")
		}
	}
	was := map[string]bool{}
	for _, p := range hostPaths(before) {
		was[p] = true
	}
	for _, p := range hostPaths(after) {
		if !was[p] {
			out = append(out, "hostPath volume "+p)
		}
	}
	for _, ct := range containers(after) {
		sc, _ := ct.spec["securityContext"].(map[string]any)
		if !on(sc, "privileged") {
			continue
		}
		old := containerByName(before, ct.list, ct.name)
		osc, _ := old["securityContext"].(map[string]any)
		if !on(osc, "privileged") {
			out = append(out, "container "+ct.name+" privileged")
		}
	}
	return out
}

func on(m map[string]any, field string) bool {
	v, _ := m[field].(bool)
	return v
}

// hostPaths are a pod spec's hostPath volumes, as "name (path)".
func hostPaths(spec map[string]any) []string {
	vols, _ := spec["volumes"].([]any)
	var out []string
	for _, v := range vols {
		m, _ := v.(map[string]any)
		hp, ok := m["hostPath"].(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		path, _ := hp["path"].(string)
		out = append(out, name+" ("+path+")")
	}
	return out
}

// nested returns the value at path, and whether it is there.
func nested(m map[string]any, path ...string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func str(m map[string]any, path ...string) (string, bool) {
	v, ok := nested(m, path...)
	s, _ := v.(string)
	return s, ok
}

func num(m map[string]any, path ...string) (float64, bool) {
	v, ok := nested(m, path...)
	switch n := v.(type) {
	case int64:
		return float64(n), ok
	case int:
		return float64(n), ok
	case float64:
		return n, ok
	}
	return 0, false
}

// intOrPercent reads an IntOrString: its number, and whether it is a percentage.
func intOrPercent(v any) (float64, bool) {
	if s, ok := v.(string); ok {
		var n float64
		fmt.Sscanf(strings.TrimSuffix(s, "%"), "%g", &n)
		return n, strings.HasSuffix(s, "%")
	}
	n, _ := num(map[string]any{"v": v}, "v")
	return n, false
}

// same reports whether the field at path is equal on both sides.
func same(c Change, path ...string) bool {
	b, _ := nested(c.Live, path...)
	a, _ := nested(c.Merged, path...)
	return reflect.DeepEqual(a, b)
}

func changedKeys(before, after map[string]any) []string {
	var out []string
	for k, v := range after {
		if bv, ok := before[k]; !ok || !reflect.DeepEqual(bv, v) {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
