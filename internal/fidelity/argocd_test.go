package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubectl/pkg/cmd/apply"
	"k8s.io/kubectl/pkg/cmd/auth"
	cmddelete "k8s.io/kubectl/pkg/cmd/delete"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/scheme"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/applier/argocd"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// argoCDApplier syncs as Argo CD's application controller does: the repo-server's
// resource tracking (written here from util/argo/resource_tracking.go, apart from
// the profile's), gitops-engine's client-side-apply migration before a server-side
// apply (pkg/sync/sync_context.go), and kubectl's apply code in-process with the
// ApplyOptions gitops-engine's newApplyOptions builds (pkg/utils/kube/resource_ops.go),
// one object at a time.
func argoCDApplier(profile string, owner applier.Owner, serverSide bool) realApplier {
	return realApplier{
		profile:    profile,
		owner:      owner,
		serverSide: serverSide,
		apply: func(t *testing.T, ns, step string, objs []*unstructured.Unstructured) {
			for _, o := range objs {
				o = o.DeepCopy()
				argoSetAppInstance(o, owner, ns)
				serverSide := argoShouldUseServerSideApply(o, serverSide)
				if serverSide {
					argoMigrateCSA(t, o)
				} else if o.GetAPIVersion() == "rbac.authorization.k8s.io/v1" {
					argoAuthReconcile(t, o)
				}
				argoKubectlApply(t, o, serverSide)
			}
		},
	}
}

// argoShouldUseServerSideApply is sync_context.go's shouldUseServerSideApply: an
// object's sync-options annotation turns server-side apply off or on.
func argoShouldUseServerSideApply(o *unstructured.Unstructured, app bool) bool {
	opts := map[string]bool{}
	for _, v := range strings.Split(o.GetAnnotations()["argocd.argoproj.io/sync-options"], ",") {
		opts[strings.TrimSpace(v)] = true
	}
	if opts["ServerSideApply=false"] {
		return false
	}
	return app || opts["ServerSideApply=true"]
}

// argoSetAppInstance is SetAppInstance for the Application owner with destination
// namespace dest, no installation ID, from Argo CD's source.
func argoSetAppInstance(un *unstructured.Unstructured, owner applier.Owner, dest string) {
	if gvk := un.GroupVersionKind(); gvk.Kind == "CustomResourceDefinition" && gvk.Group == "apiextensions.k8s.io" {
		return
	}
	appName := owner.Name // Application.InstanceName
	if owner.Namespace != "" {
		appName = owner.Namespace + "_" + owner.Name
	}
	key := owner.InstanceLabel
	if key == "" {
		key = "app.kubernetes.io/instance"
	}
	setAnnotation := func() {
		ns := un.GetNamespace()
		if ns == "" {
			ns = dest
		}
		gvk := un.GroupVersionKind()
		a := un.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		delete(a, "argocd.argoproj.io/installation-id")
		a["argocd.argoproj.io/tracking-id"] = fmt.Sprintf("%s:%s/%s:%s/%s", appName, gvk.Group, gvk.Kind, ns, un.GetName())
		un.SetAnnotations(a)
	}
	setLabel := func(val string) {
		l := un.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[key] = val
		un.SetLabels(l)
	}
	switch owner.Tracking {
	case "label":
		setLabel(appName)
	case "annotation+label":
		setAnnotation()
		val := appName
		if len(val) > 63 {
			val = val[:63]
			for !regexp.MustCompile("[a-zA-Z0-9]$").MatchString(val) {
				val = val[:len(val)-1]
			}
		}
		setLabel(val)
	default:
		setAnnotation()
	}
}

// argoMigrateCSA is performCSAUpgradeMigration with the default manager
// kubectl-client-side-apply: its managed fields become argocd-controller's.
func argoMigrateCSA(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	mapper, err := argoKubeCmdFactory(t, "").ToRESTMapper()
	if err != nil {
		t.Fatal(err)
	}
	gvk := o.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatal(err)
	}
	res := dynamic.NewForConfigOrDie(env.Config).Resource(mapping.Resource).Namespace(o.GetNamespace())
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, err := res.Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		needs := false
		for _, f := range fresh.GetManagedFields() {
			if f.Manager == applier.ClientSideFieldManager && f.Operation == metav1.ManagedFieldsOperationUpdate {
				needs = true
			}
		}
		if !needs {
			return nil
		}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(fresh, sets.New(applier.ClientSideFieldManager), argocd.FieldManager)
		if err != nil || patch == nil {
			return err
		}
		_, err = res.Patch(ctx, o.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("Argo CD's client-side apply migration of %s: %v", o.GetName(), err)
	}
}

// argoAuthReconcile is gitops-engine's rbacReconcile, run before a client-side
// apply of an RBAC object: kubectl auth reconcile in-process, with the options
// newReconcileOptions builds.
func argoAuthReconcile(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	file := argoManifest(t, obj)
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	fact := argoKubeCmdFactory(t, obj.GetNamespace())
	// The controller's clients to managed clusters set no user agent, so client-go's
	// default names the binary, and the server the manager after it.
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = "argocd-application-controller/v3.6.0 (linux/amd64) kubernetes/$Format"
	client := kubernetes.NewForConfigOrDie(cfg)
	o := auth.NewReconcileOptions(streams)
	o.RBACClient = client.RbacV1()
	o.NamespaceClient = client.CoreV1()
	o.FilenameOptions.Filenames = []string{file}
	o.Visitor = fact.NewBuilder().
		WithScheme(scheme.Scheme, scheme.Scheme.PrioritizedVersionsAllGroups()...).
		NamespaceParam(obj.GetNamespace()).DefaultNamespace().
		FilenameParam(false, o.FilenameOptions).
		Flatten().
		Do()
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	o.PrintObject = printer.PrintObj
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.RunReconcile(); err != nil {
		t.Fatalf("Argo CD's kubectl auth reconcile of %s: %v\n%s", obj.GetName(), err, out.String())
	}
}

// argoManifest writes obj as gitops-engine's createManifestFile does.
func argoManifest(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	data, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// argoKubectlApply runs kubectl's apply in-process with the options newApplyOptions
// builds: manager argocd-controller, Overwrite, OpenAPIPatch, ServerSideApply and
// ForceConflicts alike, a Validator but no ValidationDirective.
func argoKubectlApply(t *testing.T, obj *unstructured.Unstructured, serverSide bool) {
	t.Helper()
	file := argoManifest(t, obj)
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	fact := argoKubeCmdFactory(t, obj.GetNamespace())
	flags := apply.NewApplyFlags(streams)
	var err error
	o := &apply.ApplyOptions{
		IOStreams:         streams,
		VisitedUids:       sets.Set[types.UID]{},
		VisitedNamespaces: sets.Set[string]{},
		Recorder:          genericclioptions.NoopRecorder{},
		PrintFlags:        flags.PrintFlags,
		Overwrite:         true,
		OpenAPIPatch:      true,
		ServerSideApply:   serverSide,
	}
	o.DynamicClient = dynamic.NewForConfigOrDie(env.Config)
	if o.DeleteOptions, err = cmddelete.NewDeleteFlags("").ToOptions(o.DynamicClient, streams); err != nil {
		t.Fatal(err)
	}
	o.OpenAPIGetter = fact
	o.DryRunStrategy = cmdutil.DryRunNone
	o.FieldManager = argocd.FieldManager
	if o.Validator, err = fact.Validator(metav1.FieldValidationStrict); err != nil {
		t.Fatal(err)
	}
	o.Builder = fact.NewBuilder()
	if o.Mapper, err = fact.ToRESTMapper(); err != nil {
		t.Fatal(err)
	}
	o.Namespace = obj.GetNamespace()
	o.DeleteOptions.Filenames = []string{file}
	o.ForceConflicts = serverSide
	o.ToPrinter = func(operation string) (printers.ResourcePrinter, error) {
		o.PrintFlags.NamePrintFlags.Operation = operation
		return o.PrintFlags.ToPrinter()
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(); err != nil {
		t.Fatalf("Argo CD's kubectl apply of %s: %v\n%s", obj.GetName(), err, out.String())
	}
}

// argoKubeCmdFactory is gitops-engine's kubeCmdFactory against the test server, with
// its own discovery cache.
func argoKubeCmdFactory(t *testing.T, ns string) cmdutil.Factory {
	flags := genericclioptions.NewConfigFlags(true)
	if ns != "" {
		flags.Namespace = &ns
	}
	flags.KubeConfig = &env.Kubeconfig
	cache := t.TempDir()
	flags.CacheDir = &cache
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(flags))
}

func TestFidelityArgoCD(t *testing.T) {
	runCell(t, argoCDApplier("argocd", applier.Owner{Name: "shop", Tracking: "annotation"}, false))
}

func TestFidelityArgoCDServerSide(t *testing.T) {
	owner := applier.Owner{Name: "shop", Namespace: "team-a", Tracking: "annotation+label", InstanceLabel: "app.kubernetes.io/instance"}
	runCell(t, argoCDApplier("argocd-server-side", owner, true))
}

// TestFidelityArgoCDSwitchToServerSide: an Application synced client-side, then
// with ServerSideApply=true. Its objects' last-applied annotation is owned by
// argocd-controller's update, which kubectl's apply code, run by Argo CD, migrates
// after the first server-side apply: fields the repository dropped are removed.
func TestFidelityArgoCDSwitchToServerSide(t *testing.T) {
	var base, head []*unstructured.Unstructured
	const ns = "fidelity-argocd-switch"
	for _, w := range workload {
		if w.name == "edited" || w.name == "deployment" {
			base = append(base, decode(t, w.base, ns))
			head = append(head, decode(t, w.head, ns))
		}
	}
	argoCDCheck(t, ns, base, head, false, true)
}

// TestFidelityArgoCDDropsMisspelledFields: Argo CD sends no fieldValidation, so a
// client-side sync keeps going where kubectl apply's strict validation fails: the
// server's default, Warn, drops the field.
func TestFidelityArgoCDDropsMisspelledFields(t *testing.T) {
	const ns = "fidelity-argocd-misspelled"
	cm := func(name, data string) *unstructured.Unstructured {
		return decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: NS}\ndata: {a: \""+data+"\"}\ndta: {b: \"2\"}\n", ns)
	}
	argoCDCheck(t, ns, []*unstructured.Unstructured{cm("existing", "1")}, []*unstructured.Unstructured{cm("existing", "2"), cm("new", "1")}, false, false)
}

// TestFidelityArgoCDReconcilesRBACFirst: a client-side sync runs kubectl auth
// reconcile before applying an RBAC object, which creates a new one as its own
// manager.
func TestFidelityArgoCDReconcilesRBACFirst(t *testing.T) {
	const ns = "fidelity-argocd-rbac"
	role := func(name, meta, verbs string) *unstructured.Unstructured {
		return decode(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: "+name+", namespace: NS"+meta+"}\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: "+verbs+"}]\n", ns)
	}
	binding := func(name, role, subjects string) *unstructured.Unstructured {
		return decode(t, argoBinding(name, role, subjects), ns)
	}
	subjects := func(names ...string) string {
		var s []string
		for _, n := range names {
			s = append(s, "{kind: ServiceAccount, name: "+n+", namespace: NS}")
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	base := []*unstructured.Unstructured{role("reader", "", "[get]"), role("lister", "", "[get, list]"), role("same", "", "[get]"),
		binding("readers", "reader", subjects("default"))}
	head := []*unstructured.Unstructured{role("reader", ", labels: {tier: a}", "[get, list]"), role("lister", "", "[get]"), role("same", "", "[get]"),
		role("writer", "", "[create]"), binding("readers", "reader", subjects("default", "ci"))}
	argoCDCheck(t, ns, base, head, false, false)
}

// TestFidelityArgoCDRecreatesABindingWhoseRoleRefChanges: kubectl auth reconcile
// deletes a binding whose roleRef changes and creates it anew, where a plain apply
// fails.
func TestFidelityArgoCDRecreatesABindingWhoseRoleRefChanges(t *testing.T) {
	const ns = "fidelity-argocd-roleref"
	base := []*unstructured.Unstructured{decode(t, argoBinding("readers", "reader", "[]"), ns)}
	head := []*unstructured.Unstructured{decode(t, argoBinding("readers", "lister", "[]"), ns)}
	argoCDCheck(t, ns, base, head, false, false)
}

func argoBinding(name, role, subjects string) string {
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: " + name + ", namespace: NS}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: " + role + "}\nsubjects: " + subjects + "\n"
}

// TestFidelityArgoCDHonoursPerObjectServerSideApply: the sync option
// ServerSideApply on one object overrides the Application's.
func TestFidelityArgoCDHonoursPerObjectServerSideApply(t *testing.T) {
	for _, c := range []struct {
		ns, option string
		serverSide bool
	}{{"fidelity-argocd-object-ssa", "ServerSideApply=true", false}, {"fidelity-argocd-object-csa", "Prune=false, ServerSideApply=false", true}} {
		cm := func(data string) *unstructured.Unstructured {
			return decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: opted, namespace: NS, annotations: {argocd.argoproj.io/sync-options: \""+c.option+"\"}}\ndata: "+data+"\n", c.ns)
		}
		argoCDCheck(t, c.ns, []*unstructured.Unstructured{cm(`{a: "1", b: "2"}`)}, []*unstructured.Unstructured{cm(`{a: "2"}`)}, c.serverSide, c.serverSide)
	}
}

// argoCDCheck applies base with Argo CD client-side or server-side, predicts head
// under the matching profile, applies head, and compares as a matrix cell does.
func argoCDCheck(t *testing.T, ns string, base, head []*unstructured.Unstructured, baseServerSide, headServerSide bool) {
	ctx := context.Background()
	owner := applier.Owner{Name: "shop", Tracking: "annotation"}
	name := map[bool]string{false: "argocd", true: "argocd-server-side"}
	kubectl(t, "apply", "-f", "-", "<<apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	clients, err := kube.NewClients(env.Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	argoCDApplier(name[baseServerSide], owner, baseServerSide).apply(t, ns, "base", base)
	headApplier := appliersOf(t, name[headServerSide])
	predict := func() []dryrun.Result {
		objs := make([]render.Object, len(head))
		for i, o := range head {
			objs[i] = render.Object{Obj: o.DeepCopy(), Source: "workload.yaml", Doc: i + 1}
		}
		return dryrun.Run(ctx, clients, objs, dryrun.Options{Applier: headApplier, Appliers: appliers.All(), Owner: owner, Namespace: ns})
	}
	predicted := predict()
	argoCDApplier(name[headServerSide], owner, headServerSide).apply(t, ns, "head", head)
	direct := dynamic.NewForConfigOrDie(env.Config)
	for _, r := range predicted {
		if r.Err != nil {
			t.Errorf("%s: drift could not predict it: %s", r.ID.Display(), r.Err.Message)
			continue
		}
		live, err := liveOf(ctx, clients, direct, r)
		if err != nil {
			t.Fatal(err)
		}
		// A recreated object is new: its uid and creationTimestamp are the real
		// creation's, so they are compared as a new object's are.
		recreated := false
		for _, w := range r.Warnings {
			recreated = recreated || w.Reason == reason.Immutable
		}
		if recreated && live != nil && live.GetUID() == r.Live.GetUID() {
			t.Errorf("%s: predicted as recreated, but the sync kept it (uid %s)", r.ID.Display(), live.GetUID())
		}
		isNew := r.Live == nil || recreated
		if got, want := comparable(r.Merged, isNew), comparable(live, isNew); got != want {
			t.Errorf("%s: predicted and applied differ:\n%s", r.ID.Display(), lineDiff(got, want))
		}
	}
	for _, r := range predict() {
		if got, want := shown(r.Merged), shown(r.Live); r.Err != nil || got != want {
			t.Errorf("%s: second run after the apply reports a change or fails (%v):\n%s", r.ID.Display(), r.Err, lineDiff(want, got))
		}
	}
}
