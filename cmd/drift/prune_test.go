package main

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/inventory"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/report"
)

// pruneScene is the cluster state every format's test starts from: ConfigMaps a, b,
// other and a ClusterRole, applied by an applier that leaves an inventory; then the
// repository drops b and the ClusterRole, changes a and adds e.
type pruneScene struct {
	ns, role string
}

func newPruneScene(t *testing.T) pruneScene {
	ns := namespace(t)
	return pruneScene{ns: ns, role: "drift-prune-" + ns}
}

func (s pruneScene) cm(name, value, extraMeta string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n%sdata: {v: %q}\n", name, s.ns, extraMeta, value)
}

func (s pruneScene) clusterRole(extraMeta string) string {
	return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\n%srules: []\n", s.role, extraMeta)
}

func uidOf(t *testing.T, gvr schema.GroupVersionResource, ns, name string) string {
	t.Helper()
	obj, err := dynamic.NewForConfigOrDie(env.Config).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(obj.GetUID())
}

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func deletes(rep *report.Report) []string {
	var out []string
	for _, tg := range rep.Targets {
		for _, o := range tg.Objects {
			if o.Category == report.Delete {
				out = append(out, o.Kind+"/"+o.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (s pruneScene) check(t *testing.T, rep *report.Report, o outcome, inventory string) {
	t.Helper()
	if o.code != 1 || !rep.Complete {
		t.Fatalf("exit %d complete %v\n%s", o.code, rep.Complete, o.stderr)
	}
	if got, want := deletes(rep), []string{"ClusterRole/" + s.role, "ConfigMap/b"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("deletes = %v, want %v", got, want)
	}
	b := find(t, rep, "ConfigMap", "b")
	// The whole live object is removed, nothing added.
	if !strings.HasPrefix(b.Inventory, inventory) || !strings.Contains(b.Diff, `-  v: "2"`) || !strings.Contains(b.Diff, " +0,0 @@") {
		t.Errorf("b: inventory %q\n%s", b.Inventory, b.Diff)
	}
	if a := find(t, rep, "ConfigMap", "a"); a.Category != report.Modify {
		t.Errorf("a: %s", a.Category)
	}
	if e := find(t, rep, "ConfigMap", "e"); e.Category != report.Add {
		t.Errorf("e: %s", e.Category)
	}
	// The objects are still there: a dry-run delete deletes nothing.
	if _, err := dynamic.NewForConfigOrDie(env.Config).Resource(cmGVR).Namespace(s.ns).Get(context.Background(), "b", metav1.GetOptions{}); err != nil {
		t.Errorf("b is gone after a preview: %v", err)
	}
}

func TestPruneWithApplyConfigInventory(t *testing.T) {
	s := newPruneScene(t)
	lines := func(names ...string) string {
		var out []string
		for _, n := range names {
			if n == "role" {
				out = append(out, ":rbac.authorization.k8s.io:ClusterRole:"+s.role)
				continue
			}
			out = append(out, s.ns+"::ConfigMap:"+n)
		}
		return strings.Join(out, "\n")
	}
	inv := func(list string, hash string) string {
		labels := "  labels: {kubectl.kubernetes.io/apply-cfg: \"true\"" + hash + "}\n"
		return s.cm("inventory", "", labels+"  annotations:\n    kubectl.kubernetes.io/last-applied-objects: |\n"+indent(list, "      ")+"\n")
	}
	// The last apply: its inventory lists what it applied, plus a malformed line and an
	// object that is already gone; "other" was taken over by another apply.
	apply(t, "applier", inv(lines("a", "b", "role", "other", "gone")+"\nnot-a-valid-line", ""))
	uid := uidOf(t, cmGVR, s.ns, "inventory")
	owner := "  annotations: {kubectl.kubernetes.io/apply-owner: " + uid + "}\n"
	apply(t, "applier", s.cm("a", "1", owner)+"---\n"+s.cm("b", "2", owner)+"---\n"+s.clusterRole(owner)+"---\n"+
		s.cm("other", "3", "  annotations: {kubectl.kubernetes.io/apply-owner: someone-else}\n"))

	newList := lines("a", "e")
	r := repo(t, map[string]string{
		"inventory.yaml": inv(newList, ", kubectl.kubernetes.io/apply-hash: "+inventory.ApplyHash(newList+"\n")),
		"a.yaml":         s.cm("a", "1-changed", ""),
		"e.yaml":         s.cm("e", "5", ""),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	s.check(t, rep, o, "apply-config ConfigMap "+s.ns+"/inventory")
	if inv := find(t, rep, "ConfigMap", "inventory"); inv.Category != report.Modify {
		t.Errorf("the inventory's own change: %s", inv.Category)
	}
	kept := rep.Targets[0].Kept
	if len(kept) != 1 || kept[0].Name != "other" || !strings.Contains(kept[0].Reason, `names "someone-else", not this inventory`) {
		t.Errorf("kept = %+v", kept)
	}
	notes := strings.Join(rep.Targets[0].Notes, "\n")
	if !strings.Contains(notes, "v1 ConfigMap "+s.ns+"/gone is listed but already gone") || !strings.Contains(notes, `"not-a-valid-line", is not namespace:group:kind:name`) {
		t.Errorf("notes = %s", notes)
	}
	text := drift(t, "diff", "--repo", r.Dir, "--ref", "main").stdout
	for _, want := range []string{"To delete (2):", "- v1 ConfigMap " + s.ns + "/b", "owned by apply-config ConfigMap " + s.ns + "/inventory", "Kept, not deleted (1):"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "--prune=false", "-o", "json"); strings.Contains(o.stdout, `"category": "delete"`) {
		t.Errorf("--prune=false still prunes")
	}

	// A hash that does not match the annotation: the inventory was edited by hand.
	if _, err := r.CommitFiles(map[string]string{"inventory.yaml": inv(newList+"\n"+s.ns+"::ConfigMap:x", ", kubectl.kubernetes.io/apply-hash: "+inventory.ApplyHash(newList+"\n"))}, "hand edit"); err != nil {
		t.Fatal(err)
	}
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if o.code != 2 || len(deletes(rep)) != 0 {
		t.Fatalf("hash mismatch: exit %d, deletes %v", o.code, deletes(rep))
	}
	bad := false
	for _, ob := range rep.Targets[0].Objects {
		if ob.ErrorReason == "inventory" && strings.Contains(ob.Error, "the inventory was edited by hand") {
			bad = true
		}
	}
	if !bad {
		t.Errorf("no inventory error for the hash mismatch: %+v", rep.Targets[0].Objects)
	}

	// First apply: an inventory the cluster does not have yet.
	first := repo(t, map[string]string{"inventory.yaml": strings.Replace(inv(newList, ""), "name: inventory", "name: fresh-inventory", 1), "e.yaml": s.cm("e", "5", "")})
	rep, o = driftJSON(t, "diff", "--repo", first.Dir, "--ref", "main")
	if len(deletes(rep)) != 0 || !strings.Contains(strings.Join(rep.Targets[0].Notes, "\n"), "not in the cluster yet (a first apply): nothing to prune") {
		t.Errorf("first apply: exit %d deletes %v notes %v", o.code, deletes(rep), rep.Targets[0].Notes)
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func TestPruneWithCLIUtilsInventory(t *testing.T) {
	s := newPruneScene(t)
	id := "inv-" + s.ns
	invLabel := "  labels: {cli-utils.sigs.k8s.io/inventory-id: " + id + "}\n"
	inv := func(keys ...string) string {
		data := ""
		for _, k := range keys {
			data += fmt.Sprintf("  %s: \"\"\n", k)
		}
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: %s\n%sdata:\n%s", s.ns, invLabel, data)
	}
	key := func(name string) string { return s.ns + "_" + name + "__ConfigMap" }
	roleKey := "_" + s.role + "_rbac.authorization.k8s.io_ClusterRole"
	apply(t, "kpt", inv(key("a"), key("b"), roleKey, key("other"), key("gone")))
	owner := "  annotations: {config.k8s.io/owning-inventory: " + id + "}\n"
	apply(t, "kpt", s.cm("a", "1", owner)+"---\n"+s.cm("b", "2", owner)+"---\n"+s.clusterRole(owner)+"---\n"+
		s.cm("other", "3", "  annotations: {config.k8s.io/owning-inventory: another}\n"))
	r := repo(t, map[string]string{
		"inventory.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: " + s.ns + "\n" + invLabel,
		"a.yaml":         s.cm("a", "1-changed", ""),
		"e.yaml":         s.cm("e", "5", ""),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	s.check(t, rep, o, "cli-utils inventory ConfigMap "+s.ns+"/inventory")
	if kept := rep.Targets[0].Kept; len(kept) != 1 || kept[0].Name != "other" || !strings.Contains(kept[0].Reason, `names inventory "another"`) {
		t.Errorf("kept = %+v", kept)
	}
}

func TestPruneWithApplySet(t *testing.T) {
	s := newPruneScene(t)
	id := inventory.ApplySetID("parent", s.ns, "ConfigMap", "")
	parent := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parent\n  namespace: %s\n  labels: {applyset.kubernetes.io/id: %s}\n  annotations:\n    applyset.kubernetes.io/tooling: kubectl/v1.32\n    applyset.kubernetes.io/contains-group-kinds: ConfigMap,ClusterRole.rbac.authorization.k8s.io\n", s.ns, id)
	apply(t, "kubectl", parent)
	member := "  labels: {applyset.kubernetes.io/part-of: " + id + "}\n"
	apply(t, "kubectl", s.cm("a", "1", member)+"---\n"+s.cm("b", "2", member)+"---\n"+s.clusterRole(member)+"---\n"+s.cm("unrelated", "3", ""))
	r := repo(t, map[string]string{"parent.yaml": parent, "a.yaml": s.cm("a", "1-changed", member), "e.yaml": s.cm("e", "5", member)})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	s.check(t, rep, o, "ApplySet ConfigMap "+s.ns+"/parent")

	// A parent whose id label is not the one KEP-3659 gives it.
	forged := repo(t, map[string]string{"parent.yaml": strings.Replace(parent, id, "applyset-forged-v1", 1)})
	rep, o = driftJSON(t, "diff", "--repo", forged.Dir, "--ref", "main")
	if o.code != 2 || len(deletes(rep)) != 0 {
		t.Errorf("forged id: exit %d deletes %v", o.code, deletes(rep))
	}
}

// TestPruneDeleteRefusedByWebhook: a validating webhook refuses the delete; the object
// is an error, not a delete, and the report is incomplete.
func TestPruneDeleteRefusedByWebhook(t *testing.T) {
	s := newPruneScene(t)
	srv := webhookServer(t)
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	apply(t, "kubectl", "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: drift-prune-"+s.ns+"}\nwebhooks:\n"+
		"  - name: no-delete.drift.test\n    clientConfig: {url: \""+srv.URL+"/validate\", caBundle: "+ca+"}\n    admissionReviewVersions: [v1]\n    sideEffects: None\n    failurePolicy: Fail\n"+
		"    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "+s.ns+"}}\n"+
		"    rules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [DELETE], resources: [configmaps]}\n")
	id := "inv-" + s.ns
	apply(t, "kpt", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: %s\n  labels: {cli-utils.sigs.k8s.io/inventory-id: %s}\ndata:\n  %s_denied-b__ConfigMap: \"\"\n", s.ns, id, s.ns))
	apply(t, "kpt", s.cm("denied-b", "2", "  annotations: {config.k8s.io/owning-inventory: "+id+"}\n"))
	r := repo(t, map[string]string{"inventory.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: %s\n  labels: {cli-utils.sigs.k8s.io/inventory-id: %s}\n", s.ns, id)})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	b := find(t, rep, "ConfigMap", "denied-b")
	if o.code != 2 || b.Category != report.Error || b.ErrorReason != "webhook-denied" || !strings.Contains(b.Error, "admission webhook no-delete.drift.test denies") {
		t.Errorf("exit %d: %s %s %q", o.code, b.Category, b.ErrorReason, b.Error)
	}
}

// TestEphemeralPrunesWhatTheBaseInventoryOwns: with no cluster, the base is loaded
// into an ephemeral server as its applier would leave it (inventory and owner marks),
// so removing an object in the head is a delete there too.
func TestEphemeralPrunesWhatTheBaseInventoryOwns(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\ndata: {v: \"1\"}\n"
	}
	inv := func(names ...string) string {
		var lines []string
		for _, n := range names {
			lines = append(lines, "      shop::ConfigMap:"+n)
		}
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: shop\n  labels: {kubectl.kubernetes.io/apply-cfg: \"true\"}\n  annotations:\n    kubectl.kubernetes.io/last-applied-objects: |\n" + strings.Join(lines, "\n") + "\n"
	}
	r := repo(t, map[string]string{
		"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "inventory.yaml": inv("a", "b"), "a.yaml": cm("a"), "b.yaml": cm("b"),
	})
	if _, err := r.Git("tag", "base"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"b.yaml": "", "inventory.yaml": inv("a")}, "drop b"); err != nil {
		t.Fatal(err)
	}
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--cluster", "ephemeral", "--base", "base", "--ref", "main")
	if got := deletes(rep); o.code != 1 || strings.Join(got, ",") != "ConfigMap/b" {
		t.Fatalf("exit %d, deletes %v\n%s", o.code, got, o.stderr)
	}
	if a := find(t, rep, "ConfigMap", "a"); a.Category != report.Unchanged {
		t.Errorf("a: %s\n%s", a.Category, a.Diff)
	}
}

// TestPruneWithApplySetParentNamedInDriftYAML: kubectl apply --applyset=configmaps/set
// creates the parent itself; the repository names it in drift.yaml.
func TestPruneWithApplySetParentNamedInDriftYAML(t *testing.T) {
	s := newPruneScene(t)
	id := inventory.ApplySetID("set", s.ns, "ConfigMap", "")
	apply(t, "kubectl", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: set\n  namespace: %s\n  labels: {applyset.kubernetes.io/id: %s}\n  annotations:\n    applyset.kubernetes.io/tooling: kubectl/v1.32\n    applyset.kubernetes.io/contains-group-kinds: ConfigMap,ClusterRole.rbac.authorization.k8s.io\n", s.ns, id))
	member := "  labels: {applyset.kubernetes.io/part-of: " + id + "}\n"
	apply(t, "kubectl", s.cm("a", "1", member)+"---\n"+s.cm("b", "2", member)+"---\n"+s.clusterRole(member))
	r := repo(t, map[string]string{
		"drift.yaml": "targets:\n  - {name: app, path: app, namespace: " + s.ns + ", applySet: configmaps/set}\n",
		"app/a.yaml": s.cm("a", "1-changed", ""), "app/e.yaml": s.cm("e", "5", ""),
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	s.check(t, rep, o, "ApplySet ConfigMap "+s.ns+"/set")
}

// TestPruneCRDCountsItsCustomResources: a CRD pruning deletes is a data-loss risk that
// says how many custom resources go with it, counted in the cluster.
func TestPruneCRDCountsItsCustomResources(t *testing.T) {
	s := newPruneScene(t)
	group := s.ns + ".example.com"
	id := "inv-" + s.ns
	invLabel := "  labels: {cli-utils.sigs.k8s.io/inventory-id: " + id + "}\n"
	owner := "  annotations: {config.k8s.io/owning-inventory: " + id + "}\n"
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets." + group + "\n" + owner +
		"spec:\n  group: " + group + "\n  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}\n  scope: Namespaced\n" +
		"  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
	apply(t, "kpt", fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: %s\n%sdata:\n  _gadgets.%s_apiextensions.k8s.io_CustomResourceDefinition: \"\"\n", s.ns, invLabel, group))
	apply(t, "kpt", crd)
	gadget := func(name string) string {
		return "apiVersion: " + group + "/v1\nkind: Gadget\nmetadata: {name: " + name + ", namespace: " + s.ns + "}\n"
	}
	// The CRD serves its kind once it is established, and API discovery (what apply
	// maps the kind with) lists it a moment later.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}).
			Namespace(s.ns).List(context.Background(), metav1.ListOptions{})
		if err == nil {
			var c *kube.Clients
			if c, err = kube.NewClients(env.Config, 1); err == nil {
				_, err = c.Mapper.RESTMapping(schema.GroupKind{Group: group, Kind: "Gadget"}, "v1")
			}
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CRD is not served: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	apply(t, "kpt", gadget("one")+"---\n"+gadget("two")+"---\n"+gadget("three"))
	r := repo(t, map[string]string{
		"inventory.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inventory\n  namespace: " + s.ns + "\n" + invLabel,
	})
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	c := find(t, rep, "CustomResourceDefinition", "gadgets."+group)
	want := "deleting the CRD deletes every gadgets." + group + " custom resource in the cluster: 3 of them"
	if c.Category != report.Delete || len(c.Risks) != 1 || c.Risks[0].Rule != "data-loss-delete" || c.Risks[0].Message != want {
		t.Fatalf("exit %d, CRD %s with risks %+v, want %q\n%s", o.code, c.Category, c.Risks, want, o.stderr)
	}
}
