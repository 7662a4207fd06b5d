package inventory

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/render"
)

func TestApplySetIDFollowsKEP3659(t *testing.T) {
	// Computed independently: base64url(sha256("shop-set.shop.ConfigMap.")), unpadded.
	if got := ApplySetID("shop-set", "shop", "ConfigMap", ""); got != "applyset-U5tbO0aFXeTLUoBfyeLydowVaWpbgROrFvcUWQTDNLo-v1" {
		t.Errorf("id = %s", got)
	}
}

func TestApplyHashFitsALabel(t *testing.T) {
	h := ApplyHash("shop::ConfigMap:a\n")
	if len(h) != 63 || strings.ToLower(h) != h || h == ApplyHash("shop::ConfigMap:b\n") {
		t.Errorf("hash %q", h)
	}
}

func cfg(name string, labels map[string]any) render.Object {
	return render.Object{Source: name + ".yaml", Doc: 1, Obj: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "shop", "labels": labels}}}}
}

func TestTwoApplyConfigObjectsInOneTargetAreAnError(t *testing.T) {
	invs, fails := Find([]render.Object{
		cfg("one", map[string]any{ApplyConfigLabel: "true"}),
		cfg("two", map[string]any{ApplyConfigLabel: "true"}),
		cfg("kpt", map[string]any{CLIUtilsInventoryID: "x"}),
	})
	if len(fails) != 2 || !strings.Contains(fails[0].Message, "the target has 2 apply-config objects") || !strings.Contains(fails[0].Message, "one.yaml document 1, two.yaml document 1") {
		t.Errorf("failures = %+v", fails)
	}
	if len(invs) != 1 || invs[0].Format != CLIUtils {
		t.Errorf("inventories = %+v", invs)
	}
}

// The marks an applier leaves: the apply-config object's owner mark, a cli-utils
// inventory's list and owner, an ApplySet's group-kinds and part-of label.
func TestRecordIsWhatTheApplierWrites(t *testing.T) {
	t.Parallel()
	members := []object.ID{{Namespace: "shop", Kind: "ConfigMap", Name: "a"}, {Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}, {Namespace: "shop", Kind: "ConfigMap", Name: "b"}}
	patch, mark := Inventory{Format: ApplyConfig}.Record(members, "uid-1")
	if patch != nil || mark["annotations"].(map[string]any)[ApplyOwnerAnnotation] != "uid-1" {
		t.Errorf("apply-config: patch %v, mark %v", patch, mark)
	}
	patch, mark = Inventory{Format: CLIUtils, Obj: cfg("kpt", map[string]any{CLIUtilsInventoryID: "inv-1"})}.Record(members, "")
	if data := patch["data"].(map[string]any); len(data) != 3 || data["shop_web_apps_Deployment"] != "" || mark["annotations"].(map[string]any)[CLIUtilsOwner] != "inv-1" {
		t.Errorf("cli-utils: patch %v, mark %v", patch, mark)
	}
	id := ApplySetID("set", "shop", "ConfigMap", "")
	patch, mark = Inventory{Format: ApplySet, Obj: cfg("set", map[string]any{ApplySetIDLabel: id})}.Record(members, "")
	annotations := patch["metadata"].(map[string]any)["annotations"].(map[string]any)
	if annotations[ApplySetGroupKinds] != "ConfigMap,Deployment.apps" || mark["labels"].(map[string]any)[ApplySetPartOfLabel] != id {
		t.Errorf("applyset: patch %v, mark %v", patch, mark)
	}
}
