package entry

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

// TestAPredictionThatIsTheLiveObjectIsUnchangedAsIs: a prediction that is its live
// object field for field (a dry-run cache's sameAsLive answer) is an unchanged entry
// without its sides being built; what that skips would have left the two sides equal
// (sides, then the scrubber, for a Service the server allocated addresses to, a
// Secret, and an object with ignore and mask rules, on a live cluster and a
// throwaway one); and the objects where skipping would change the entry take the
// whole path (a jq ignore rule, an encrypted Secret whose document changes, the YAML
// asked for).
func TestAPredictionThatIsTheLiveObjectIsUnchangedAsIs(t *testing.T) {
	t.Parallel()
	decode := func(doc string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	const (
		svcRendered = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {type: NodePort, selector: {app: web}, ports: [{port: 80}]}\n"
		svcLive     = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop, uid: u-1, resourceVersion: '7', managedFields: [{manager: kubectl, operation: Apply, fieldsType: FieldsV1, fieldsV1: {'f:spec': {'f:selector': {}}}}]}\nspec: {type: NodePort, clusterIP: 10.0.0.7, clusterIPs: [10.0.0.7], selector: {app: web}, ports: [{port: 80, nodePort: 30080, protocol: TCP, targetPort: 80}]}\n"
		secret      = "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, resourceVersion: '3'}\ndata: {password: czNjcjN0}\n"
		configMap   = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop, resourceVersion: '9', annotations: {note: x}}\ndata: {token: t0k3n-value, level: debug}\n"
	)
	rules := config.Rules{
		Ignore: []config.IgnoreRule{{Selector: config.Selector{Kind: "ConfigMap"}, Paths: []string{"/metadata/annotations/note"}, Managers: []string{"kubectl"}}},
		Mask:   []config.MaskRule{{Selector: config.Selector{Kind: "ConfigMap"}, Paths: []string{"/data/token"}}},
	}
	for _, ephemeral := range []bool{false, true} {
		for _, c := range []struct{ name, rendered, live string }{
			{"a Service", svcRendered, svcLive},
			{"a Secret", secret, secret},
			{"a ConfigMap with ignore and mask rules", configMap, configMap},
		} {
			sc := scrub.New()
			sc.AddCredential("t0k3n-value")
			b := NewBuilder(Options{Ephemeral: ephemeral}, sc)
			rs := b.compile(rules)
			live := decode(c.live)
			r := dryrun.Result{ID: object.IDOf(live), Object: render.Object{Obj: decode(c.rendered), Source: "x.yaml", Doc: 1}, Live: live, Merged: live.DeepCopy()}
			if !b.unchangedAsIs(r, rs) {
				t.Fatalf("%s (ephemeral %v): not taken as is", c.name, ephemeral)
			}
			o, err := b.build(r, rs, report.SidesApply, "")
			if err != nil || o.Category != report.Unchanged || o.Diff != "" || o.Risks != nil || o.FromYAML != "" {
				t.Fatalf("%s (ephemeral %v): %s %q %v %v", c.name, ephemeral, o.Category, o.Diff, o.Risks, err)
			}
			l, m, err := b.sides(r, rs)
			if err != nil {
				t.Fatal(err)
			}
			if !same(l, m) {
				t.Errorf("%s (ephemeral %v): the sides of equal objects differ:\n%v\n%v", c.name, ephemeral, l.Object, m.Object)
			}
			if _, differ := scrubSides(sc, l, m, true); differ {
				t.Errorf("%s (ephemeral %v): the scrubbed sides of equal objects differ", c.name, ephemeral)
			}
		}
	}

	b := NewBuilder(Options{}, scrub.New())
	cm := decode(configMap)
	plain := dryrun.Result{ID: object.IDOf(cm), Object: render.Object{Obj: cm}, Live: cm, Merged: cm.DeepCopy()}
	withJQ := b.compile(config.Rules{Ignore: []config.IgnoreRule{{Selector: config.Selector{Kind: "ConfigMap"}, JQ: []string{".data.level"}}}})
	if b.unchangedAsIs(plain, withJQ) {
		t.Error("an object a jq rule selects was taken as is")
	}
	encrypted := plain
	encrypted.Object.Notes = []render.Note{{Reason: reason.Encrypted, Message: "no key", Changed: true}}
	if b.unchangedAsIs(encrypted, b.compile(config.Rules{})) {
		t.Error("an encrypted Secret whose document changes was taken as is")
	}
	if NewBuilder(Options{UnchangedYAML: true}, scrub.New()).unchangedAsIs(plain, b.compile(config.Rules{})) {
		t.Error("taken as is with the YAML asked for")
	}
	changed := plain
	changed.Merged = cm.DeepCopy()
	changed.Merged.Object["data"].(map[string]any)["level"] = "info"
	if b.unchangedAsIs(changed, b.compile(config.Rules{})) {
		t.Error("a changed object was taken as is")
	}
}
