package entry

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
)

const hpaLive = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations: {deploy/at: "monday", team: blue}
  managedFields:
  - manager: flux
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}
  - manager: hpa-controller
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:replicas": {}}}
  - manager: sidecar-injector
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"proxy\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}
spec:
  replicas: 7
  template:
    spec:
      containers:
      - {name: web, image: "web:1"}
      - {name: proxy, image: "proxy:3"}
`

func TestIgnoreRulesMakeOnlyIgnoredDifferencesUnchanged(t *testing.T) {
	merged := strings.NewReplacer("replicas: 7", "replicas: 2", `deploy/at: "monday"`, `deploy/at: "tuesday"`, `image: "proxy:3"`, `image: "proxy:4"`).Replace(hpaLive)
	r := reporttest.Result(t, "web.yaml", 1, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n", hpaLive, merged)

	if o := buildOne(t, r, config.Rules{}); o.Category != report.Modify {
		t.Fatalf("without rules: %s, want modify", o.Category)
	}
	rules := config.Rules{Ignore: []config.IgnoreRule{
		{Selector: config.Selector{Group: "apps", Kind: "Deployment"}, Managers: []string{"hpa-*", "sidecar-injector"}},
		{Selector: config.Selector{Kind: "Deployment", Name: "web"}, Paths: []string{"/metadata/annotations/deploy~1at"}},
	}}
	o := buildOne(t, r, rules)
	if o.Category != report.Unchanged || o.Diff != "" {
		t.Fatalf("with rules: %s\n%s", o.Category, o.Diff)
	}
	// The rest still counts: a change to the web container is shown.
	merged2 := strings.Replace(merged, `image: "web:1"`, `image: "web:2"`, 1)
	o = buildOne(t, reporttest.Result(t, "web.yaml", 1, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n", hpaLive, merged2), rules)
	if o.Category != report.Modify || !strings.Contains(o.Diff, "image: web:2") || strings.Contains(o.Diff, "replicas") || strings.Contains(o.Diff, "proxy") || strings.Contains(o.Diff, "deploy/at") {
		t.Fatalf("%s\n%s", o.Category, o.Diff)
	}
	// A rule for another kind or namespace does not apply.
	other := config.Rules{Ignore: []config.IgnoreRule{{Selector: config.Selector{Kind: "StatefulSet"}, Paths: []string{"/spec/replicas"}},
		{Selector: config.Selector{Namespace: "prod-*"}, Paths: []string{"/spec/replicas"}}}}
	if o := buildOne(t, r, other); !strings.Contains(o.Diff, "replicas") {
		t.Errorf("a rule for another kind or namespace hid replicas:\n%s", o.Diff)
	}
}

func TestIgnoreWildcardPathsAndEmptyParents(t *testing.T) {
	live := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, annotations: {a: '1'}}\nspec: {containers: [{name: a, image: x:1}, {name: b, image: y:1}]}\n"
	merged := "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\nspec: {containers: [{name: a, image: x:2}, {name: b, image: y:2}]}\n"
	r := reporttest.Result(t, "p.yaml", 1, merged, live, merged)
	o := buildOne(t, r, config.Rules{Ignore: []config.IgnoreRule{{Paths: []string{"/spec/containers/*/image", "/metadata/annotations/a"}}}})
	if o.Category != report.Unchanged {
		t.Fatalf("%s\n%s", o.Category, o.Diff)
	}
}

func TestMaskRulesHideValuesAndScrubMessages(t *testing.T) {
	live := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-credentials, namespace: n}\ndata: {token: old-token-value, user: admin-user}\n"
	merged := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-credentials, namespace: n}\ndata: {token: new-token-value, user: admin-user, extra: brand-new-value}\n"
	r := reporttest.Result(t, "cm.yaml", 1, merged, live, merged)
	r.Warnings = []dryrun.Message{{Reason: reason.ServerWarning, Message: "unknown field with new-token-value"}}
	rules := config.Rules{Mask: []config.MaskRule{{Selector: config.Selector{Kind: "ConfigMap", Name: "*-credentials"}, Paths: []string{"/data"}}}}
	o := buildOne(t, r, rules)
	for _, secret := range []string{"old-token-value", "new-token-value", "admin-user", "brand-new-value"} {
		if strings.Contains(o.Diff, secret) || strings.Contains(o.Warnings[0].Message, secret) || strings.Contains(o.FromYAML+o.ToYAML, secret) {
			t.Errorf("%s leaked:\n%s\n%v", secret, o.Diff, o.Warnings)
		}
	}
	for _, want := range []string{"-  token: '*** (before)'", "+  token: '*** (after)'", "+  extra: '***'", "   user: '***'"} {
		if !strings.Contains(o.Diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, o.Diff)
		}
	}
	// Not selected: shown as is.
	plain := buildOne(t, r, config.Rules{Mask: []config.MaskRule{{Selector: config.Selector{Kind: "Secret"}, Paths: []string{"/data"}}}})
	if !strings.Contains(plain.Diff, "new-token-value") {
		t.Errorf("unselected object masked:\n%s", plain.Diff)
	}
}

func TestNotesBecomeWarnings(t *testing.T) {
	r := reporttest.Result(t, "job.yaml", 1, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: n}\n", "", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: n}\n")
	r.Object.Notes = append(r.Object.Notes, render.Note{Reason: reason.HelmHook, Message: "a hook"})
	o := buildOne(t, r, config.Rules{})
	if len(o.Warnings) != 1 || o.Warnings[0].Reason != "helm-hook" {
		t.Errorf("warnings = %v", o.Warnings)
	}
}

func TestDeleteShowsTheWholeLiveObjectWithSecretsMasked(t *testing.T) {
	live := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, uid: u1, resourceVersion: '3'}\ndata: {password: " + reporttest.B64("hunter22") + "}\n"
	r := dryrun.Result{Live: reporttest.Obj(t, live), Inventory: "apply-config ConfigMap n/inventory"}
	r.ID = object.IDOf(r.Live)
	o := buildOne(t, r, config.Rules{})
	if o.Category != report.Delete || o.Inventory != "apply-config ConfigMap n/inventory" || !strings.Contains(o.Diff, "-  password: '***'") ||
		strings.Contains(o.Diff, reporttest.B64("hunter22")) || strings.Contains(o.Diff, "\n+ ") || !strings.Contains(o.Diff, "@@ -1,8 +0,0 @@") {
		t.Fatalf("%s %q\n%s", o.Category, o.Inventory, o.Diff)
	}
}

// Trim drops what the report does not read: the report of a trimmed result is the
// report of the whole result, with or without rules naming managers, and only those
// managers' entries are kept.
func TestTrimKeepsWhatTheReportReads(t *testing.T) {
	t.Parallel()
	merged := strings.NewReplacer("replicas: 7", "replicas: 2", `image: "web:1"`, `image: "web:2"`).Replace(hpaLive)
	rendered := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
	for _, rules := range []config.Rules{{}, {Ignore: []config.IgnoreRule{{Selector: config.Selector{Kind: "Deployment"}, Managers: []string{"hpa-*"}}}}} {
		whole := buildOne(t, reporttest.Result(t, "web.yaml", 1, rendered, hpaLive, merged), rules)
		r := reporttest.Result(t, "web.yaml", 1, rendered, hpaLive, merged)
		Trim(rules, &r)
		if r.Merged.GetManagedFields() != nil {
			t.Errorf("the prediction keeps its managedFields")
		}
		var kept []string
		for _, mf := range r.Live.GetManagedFields() {
			kept = append(kept, mf.Manager)
		}
		want := ""
		if len(rules.Ignore) > 0 {
			want = "hpa-controller"
		}
		if strings.Join(kept, ",") != want {
			t.Errorf("rules %+v: live keeps managers %v, want %q", rules, kept, want)
		}
		if trimmed := buildOne(t, r, rules); trimmed.Diff != whole.Diff || trimmed.Category != whole.Category {
			t.Errorf("rules %+v: trimmed %s\n%s\nwhole %s\n%s", rules, trimmed.Category, trimmed.Diff, whole.Category, whole.Diff)
		}
	}
}
