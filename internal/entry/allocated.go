package entry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// allocatedValue stands for a value the server allocates from a pool when it creates
// an object (a Service's cluster IP, a node port): a dry run shows a placeholder or a
// random pick, which the real create would not keep.
const allocatedValue = "(allocated)"

// serviceAllocated are the Service fields the server allocates when the manifest leaves
// them unset.
var serviceAllocated = [][]string{{"spec", "clusterIP"}, {"spec", "clusterIPs"}, {"spec", "healthCheckNodePort"}}

// markAllocated shows as "(allocated)" the values of u the server allocated: those the
// rendered manifest does not set and that differ from the real object's (real, nil when
// the object does not exist: then every allocated value is invented by the dry run).
// A value u keeps from the real object is real and shown as it is.
func markAllocated(rendered, real, u *unstructured.Unstructured) {
	if u == nil || !isService(u) {
		return
	}
	for _, path := range serviceAllocated {
		v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		if !found || setIn(rendered, path...) || placeholderless(v) {
			continue
		}
		if real != nil {
			if rv, ok, _ := unstructured.NestedFieldNoCopy(real.Object, path...); ok && equality.Semantic.DeepEqual(rv, v) {
				continue
			}
		}
		if list, ok := v.([]interface{}); ok {
			// The server copies a clusterIP the manifest sets into clusterIPs.
			set := map[interface{}]bool{}
			if ip, ok, _ := unstructured.NestedString(rendered.Object, "spec", "clusterIP"); rendered != nil && ok {
				set[ip] = true
			}
			marked := make([]interface{}, len(list))
			for i, ip := range list {
				marked[i] = ip
				if !set[ip] && !placeholderless(ip) {
					marked[i] = allocatedValue
				}
			}
			_ = unstructured.SetNestedSlice(u.Object, marked, path...)
			continue
		}
		_ = unstructured.SetNestedField(u.Object, allocatedValue, path...)
	}
	ports, found, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	if !found {
		return
	}
	for i, p := range ports {
		pm, ok := p.(map[string]interface{})
		if !ok || pm["nodePort"] == nil {
			continue
		}
		if np, ok := portOf(rendered, pm)["nodePort"]; ok && np != nil {
			continue
		}
		if rp := portOf(real, pm); rp != nil && equality.Semantic.DeepEqual(rp["nodePort"], pm["nodePort"]) {
			continue
		}
		pm["nodePort"] = allocatedValue
		ports[i] = pm
	}
	_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
}

// placeholderless reports a value the server does not allocate: a headless Service's
// "None", or nothing.
func placeholderless(v interface{}) bool {
	switch v := v.(type) {
	case string:
		return v == "" || v == "None"
	case []interface{}:
		return len(v) == 0 || (len(v) == 1 && v[0] == "None")
	}
	return v == nil
}

func setIn(u *unstructured.Unstructured, path ...string) bool {
	if u == nil {
		return false
	}
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return found && v != nil
}

// portOf returns u's Service port that is p: the same port number and protocol (TCP
// when unset), as the server matches them when it keeps node ports.
func portOf(u *unstructured.Unstructured, p map[string]interface{}) map[string]interface{} {
	if u == nil {
		return nil
	}
	ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	for _, q := range ports {
		qm, ok := q.(map[string]interface{})
		if ok && portKey(qm) == portKey(p) {
			return qm
		}
	}
	return nil
}

func portKey(p map[string]interface{}) string {
	proto, _ := p["protocol"].(string)
	if proto == "" {
		proto = "TCP"
	}
	return fmt.Sprint(p["port"]) + "/" + proto
}

func isService(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Service"
}
