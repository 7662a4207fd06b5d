package prune

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	invs, fails := inventories([]render.Object{
		cfg("one", map[string]any{ApplyConfigLabel: "true"}),
		cfg("two", map[string]any{ApplyConfigLabel: "true"}),
		cfg("kpt", map[string]any{cliUtilsInventoryID: "x"}),
	})
	if len(fails) != 2 || !strings.Contains(fails[0].Message, "the target has 2 apply-config objects") || !strings.Contains(fails[0].Message, "one.yaml document 1, two.yaml document 1") {
		t.Errorf("failures = %+v", fails)
	}
	if len(invs) != 1 || invs[0].format != FormatCLIUtils {
		t.Errorf("inventories = %+v", invs)
	}
}
