package risk

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"
)

// rules is the table: one row per risk, in the order reports list them.
var rules = []Rule{
	{Name: "data-loss-delete", Summary: "deleting a PersistentVolumeClaim, PersistentVolume, Namespace (every object in it) or CustomResourceDefinition (every custom resource of it)", check: dataLossDelete},
	{Name: "recreate-required", Summary: "the change sets a field the API server does not let change: the apply fails until the object is deleted and recreated", check: recreateRequired},
	{Name: "volume-claim-templates", Summary: "a StatefulSet's volumeClaimTemplates change: they cannot be changed in place, and existing claims keep what they were made with", check: volumeClaimTemplates},
	{Name: "scale-to-zero", Summary: "a workload's replicas go to 0", check: scaleToZero},
	{Name: "selector-changed", Summary: "a workload's or Service's selector changes (a workload's cannot change in place; a Service's sends traffic elsewhere)", check: selectorChanged},
	{Name: "strategy-changed", Summary: "a Deployment's strategy or a StatefulSet's or DaemonSet's updateStrategy changes", check: strategyChanged},
	{Name: "pod-rollout", Summary: "a Deployment's, StatefulSet's or DaemonSet's pod template changes: every pod is replaced", check: podRollout},
	{Name: "pdb-tightened", Summary: "a PodDisruptionBudget allows fewer disruptions (minAvailable up, maxUnavailable down)", check: pdbTightened},
	{Name: "rbac-widened", Summary: "a Role or ClusterRole grants verbs, resources or URLs it did not (or a new one grants `*`)", check: rbacWidened},
	{Name: "rbac-privileged-binding", Summary: "a binding to cluster-admin, or to a `system:` group (system:authenticated, system:unauthenticated, ...)", check: rbacPrivilegedBinding},
	{Name: "image-unpinned", Summary: "a container image moves to `:latest`, to no tag, or off a pinned digest", check: imageUnpinned},
	{Name: "secret-changed", Summary: "a Secret's data changes or the Secret is deleted", check: secretChanged},
	{Name: "token-mount", Summary: "service account token mounting is turned on (automountServiceAccountToken no longer false)", check: tokenMount},
	{Name: "host-access", Summary: "a pod gets hostPath volumes, privileged containers, or the host's network, PID or IPC namespace", check: hostAccess},
}

func dataLossDelete(c Change) []string {
	if c.Category != Delete {
		return nil
	}
	switch gk(c) {
	case "PersistentVolumeClaim":
		return []string{"deleting the claim releases its volume: with the reclaim policy Delete its data is gone"}
	case "PersistentVolume":
		p, _ := str(c.Live, "spec", "persistentVolumeReclaimPolicy")
		if p == "" {
			p = "unset"
		}
		return []string{"deleting the volume (reclaim policy " + p + ")"}
	case "Namespace":
		return []string{"deleting the namespace deletes every object in it"}
	case "apiextensions.k8s.io/CustomResourceDefinition":
		plural, _ := str(c.Live, "spec", "names", "plural")
		group, _ := str(c.Live, "spec", "group")
		what := "every " + plural + "." + group + " custom resource in the cluster"
		switch n := c.CustomResources; {
		case n == nil:
		case *n == 0:
			what += " (there are none now)"
		case *n == 1:
			what += ": 1 of them"
		case *n > 0:
			what += fmt.Sprintf(": %d of them", *n)
		default:
			what += fmt.Sprintf(": at least %d of them", -*n-1)
		}
		return []string{"deleting the CRD deletes " + what}
	}
	return nil
}

func recreateRequired(c Change) []string {
	if c.ErrorReason != "immutable" {
		return nil
	}
	return []string{"an immutable field changes: the apply fails until the object is deleted and recreated"}
}

func volumeClaimTemplates(c Change) []string {
	if c.Category != Modify || gk(c) != "apps/StatefulSet" || same(c, "spec", "volumeClaimTemplates") {
		return nil
	}
	return []string{"volumeClaimTemplates change: the StatefulSet must be recreated, and existing claims keep their old size and class"}
}

// scaled are the kinds whose spec.replicas counts pods.
var scaled = map[string]bool{"apps/Deployment": true, "apps/StatefulSet": true, "apps/ReplicaSet": true, "ReplicationController": true}

func scaleToZero(c Change) []string {
	if c.Category != Modify || !scaled[gk(c)] {
		return nil
	}
	before, ok := num(c.Live, "spec", "replicas")
	if !ok {
		before = 1
	}
	after, ok := num(c.Merged, "spec", "replicas")
	if !ok || after != 0 || before == 0 {
		return nil
	}
	return []string{fmt.Sprintf("replicas %v → 0: every pod stops", before)}
}

// templated are the kinds with a pod template that rolls its pods when it changes.
var templated = map[string]bool{"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true}

func selectorChanged(c Change) []string {
	if c.Category != Modify || same(c, "spec", "selector") {
		return nil
	}
	switch k := gk(c); {
	case k == "Service":
		return []string{"spec.selector changes: the Service sends traffic to other pods"}
	case templated[k] || scaled[k] || k == "batch/Job":
		return []string{"spec.selector changes: it cannot change in place, the object must be recreated"}
	}
	return nil
}

func strategyChanged(c Change) []string {
	if c.Category != Modify {
		return nil
	}
	field := "updateStrategy"
	switch gk(c) {
	case "apps/Deployment":
		field = "strategy"
	case "apps/StatefulSet", "apps/DaemonSet":
	default:
		return nil
	}
	if same(c, "spec", field) {
		return nil
	}
	before, _ := str(c.Live, "spec", field, "type")
	after, _ := str(c.Merged, "spec", field, "type")
	if before != after {
		return []string{fmt.Sprintf("%s %s → %s", field, cmp.Or(before, "(unset)"), cmp.Or(after, "(unset)"))}
	}
	return []string{field + " changes"}
}

func podRollout(c Change) []string {
	if c.Category != Modify || !templated[gk(c)] || same(c, "spec", "template") {
		return nil
	}
	return []string{"the pod template changes: every pod is replaced"}
}

func pdbTightened(c Change) []string {
	if c.Category != Modify || gk(c) != "policy/PodDisruptionBudget" {
		return nil
	}
	var out []string
	for _, f := range []struct {
		name string
		up   bool // a larger value is tighter
	}{{"minAvailable", true}, {"maxUnavailable", false}} {
		b, bok := nested(c.Live, "spec", f.name)
		a, aok := nested(c.Merged, "spec", f.name)
		if !aok || reflect.DeepEqual(a, b) {
			continue
		}
		if !bok {
			out = append(out, fmt.Sprintf("%s set to %v", f.name, a))
			continue
		}
		bv, bp := intOrPercent(b)
		av, ap := intOrPercent(a)
		if bp != ap {
			out = append(out, fmt.Sprintf("%s %v → %v", f.name, b, a))
		} else if (f.up && av > bv) || (!f.up && av < bv) {
			out = append(out, fmt.Sprintf("%s %v → %v: fewer disruptions allowed", f.name, b, a))
		}
	}
	return out
}

func secretChanged(c Change) []string {
	if gk(c) != "Secret" {
		return nil
	}
	switch c.Category {
	case Delete:
		return []string{"the Secret is deleted"}
	case Modify:
		var keys []string
		for _, field := range []string{"data", "stringData"} {
			b, _ := nested(c.Live, field)
			a, _ := nested(c.Merged, field)
			bm, _ := b.(map[string]any)
			am, _ := a.(map[string]any)
			keys = append(keys, changedKeys(bm, am)...)
		}
		if len(keys) == 0 {
			if same(c, "type") {
				return nil
			}
			return []string{"the Secret's type changes"}
		}
		return []string{"Secret data changes: " + list(dedupe(keys), 5)}
	}
	return nil
}

func tokenMount(c Change) []string {
	if c.Category != Modify {
		return nil
	}
	if gk(c) == "ServiceAccount" {
		if offBefore(c.Live, "automountServiceAccountToken") && !offBefore(c.Merged, "automountServiceAccountToken") {
			return []string{"automountServiceAccountToken no longer false: pods of this service account get its token"}
		}
		return nil
	}
	b, a := podSpec(c.ID, c.Live), podSpec(c.ID, c.Merged)
	if b == nil || a == nil {
		return nil
	}
	if offBefore(b, "automountServiceAccountToken") && !offBefore(a, "automountServiceAccountToken") {
		return []string{"automountServiceAccountToken no longer false: the pods get a service account token"}
	}
	return nil
}

func offBefore(m map[string]any, field string) bool {
	v, ok := m[field].(bool)
	return ok && !v
}

func list(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}
