package dryrun

import (
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/serverside"
	"github.com/drift-gitops/drift/internal/dryrun/crd"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
)

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// previewChangedCR previews a custom resource whose CRD the change modifies, when the
// modification touches the object's version (its schema or subresources, or a version
// the cluster does not serve yet): the cluster still serves the old CRD, so a server
// dry run would prune or reject new fields and miss new defaults. The apply is then
// done locally with the API server's own code, against the CRD as the change makes
// it. It reports false, leaving r alone, when the usual preview is right: the CRD is
// not in the change, not live (a pending CRD), or serves the object's version as it
// will.
func previewChangedCR(ctx context.Context, c *kube.Clients, r *Result, opts Options) bool {
	changed, ver := r.pendingCRD, r.pendingVer
	if changed == nil {
		changed, ver = opts.Pending.crdFor(r.ID.GroupKind(), r.ID.Version)
	}
	if changed == nil || ver == nil || r.Object.Name() == "" {
		return false
	}
	live, err := changed.Live(ctx, c, opts.RequestTimeout)
	if err != nil {
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"could not read CustomResourceDefinition %s to compare it with this change (%s), so this object was previewed as if the CRD stayed as it is: %s",
			changed.Name(), changed.Source, kube.WithoutValues(err.Error()))})
		return false
	}
	if live == nil || crd.ServedVersion(live) == "" || !changed.Changes(live, r.ID.Version) || !applied(changed, opts) {
		return false
	}
	if opts.Applier.Sending().Method != applier.ServerSide {
		// The local apply is server-side apply's; a client-side or Helm patch under
		// the new schema is not reproduced.
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"this change modifies CustomResourceDefinition %s (%s), but the %s applier's patch is previewed against the CRD the cluster serves now: fields new in the change may be refused or dropped, and new defaults are missing",
			changed.Name(), changed.Source, opts.Applier.Name())})
		return false
	}
	if err := ver.Usable(); err != nil {
		r.Err = changedCRError(changed, []string{fmt.Sprintf("version %s of the CRD has no usable schema: %s", r.ID.Version, err)})
		return true
	}
	ls, err := crd.NewLocalServer(changed, ver, r.ID.Version)
	if err != nil {
		r.Err = changedCRError(changed, []string{"the API server could not serve it: " + err.Error()})
		return true
	}
	from := r.ID.Version
	if !crd.ServesVersion(live, from) {
		from = crd.ServedVersion(live)
	}
	current, ok := readForChangedCRD(ctx, c, r, live, from, opts)
	if !ok {
		return true
	}
	if ls.NeedsWebhook(current, from) {
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"this change modifies CustomResourceDefinition %s (%s), but applying this object under it converts between versions with the CRD's conversion webhook, which drift does not call: it was previewed against the CRD the cluster serves now, so new fields and defaults of the change may be missing",
			changed.Name(), changed.Source)})
		return false
	}
	obj, skip, err := prepared(r, current, opts)
	if err != nil {
		r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
		return true
	}
	if skip != "" {
		untouched(r, current, skip, opts)
		return true
	}
	obj.SetResourceVersion("")
	merged, problems, err := applyLocally(ls, r, current, obj, opts)
	switch {
	case err != nil:
		r.Err = changedCRError(changed, []string{kube.WithoutValues(err.Error())})
	case len(problems) > 0:
		r.Err = changedCRError(changed, problems)
	default:
		served := "still serves the old schema of " + r.ID.Version
		if !crd.ServesVersion(live, r.ID.Version) {
			served = "does not serve " + r.ID.Version + " yet"
		}
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"this change modifies CustomResourceDefinition %s (%s) and the cluster %s: this object was previewed against the CRD as the change makes it, applied locally with the API server's own code (server-side apply, pruning, defaulting, schema validation); admission webhooks and CEL validation rules were not run",
			changed.Name(), changed.Source, served)})
		_ = settle(c, r, current, merged, nil, 1, opts)
	}
	return true
}

// applyLocally does what the API server does with a server-side apply of obj over
// live once it serves the rendered CRD (crd.LocalServer): conflicting fields are taken
// over as a forced apply, with a warning, unless forced from the start; an object
// applied client-side before is migrated as kubectl migrates it, when the applier
// migrates. It answers the result as stored; problems are the reasons the server
// would refuse it.
func applyLocally(ls *crd.LocalServer, r *Result, live, obj *unstructured.Unstructured, opts Options) (merged *unstructured.Unstructured, problems []string, err error) {
	if problems := ls.Check(obj); len(problems) > 0 {
		return nil, problems, nil
	}
	base := ls.Base(live)
	force := opts.ForceConflicts
	csa := applier.AppliedClientSide(live, opts.FieldManager)
	merged, err = ls.Apply(base, obj, opts.FieldManager, force)
	if err != nil && !force && serverside.IsFieldManagerConflict(err) {
		if !csa || !serverside.OnlyCSAConflicts(err) {
			r.Warnings = append(r.Warnings, Message(serverside.ConflictWarning(err)))
		}
		merged, err = ls.Apply(base, obj, opts.FieldManager, true)
	}
	if err != nil {
		return nil, nil, err
	}
	if m := opts.Applier.Sending().Migration; csa && m != nil {
		var removed []string
		if merged, removed, err = ls.Migrate(merged, obj, opts.FieldManager); err != nil {
			return nil, nil, err
		}
		r.Warnings = append(r.Warnings, Message(serverside.MigrationWarning(opts.Applier.Name(), opts.FieldManager, m, removed)))
	}
	merged, problems = ls.Finish(merged, base, live == nil)
	return merged, problems, nil
}

// readForChangedCRD reads the live custom resource at version from: the object's own
// version, or one the cluster serves when it does not serve that yet, converted as
// strategy None converts (the apiVersion only; needsWebhook tells when that is not
// enough). A missing namespace fails r, as on the server. It reports false when r is
// done.
func readForChangedCRD(ctx context.Context, c *kube.Clients, r *Result, live *apiextensionsv1.CustomResourceDefinition, from string, opts Options) (*unstructured.Unstructured, bool) {
	gvr := schema.GroupVersionResource{Group: live.Spec.Group, Version: from, Resource: live.Spec.Names.Plural}
	var res dynamic.ResourceInterface = c.Dynamic.Resource(gvr)
	if live.Spec.Scope == apiextensionsv1.NamespaceScoped {
		res = c.Dynamic.Resource(gvr).Namespace(r.ID.Namespace)
	}
	current, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return kube.Get(ctx, res, r.ID.Name, false, opts.RequestTimeout)
	})
	if err != nil {
		r.Err = requestError(c, "get", r, err)
		return nil, false
	}
	if current != nil {
		current.SetAPIVersion(schema.GroupVersion{Group: live.Spec.Group, Version: r.ID.Version}.String())
		return current, true
	}
	if r.ID.Namespace != "" && !opts.Pending.Namespaces[r.ID.Namespace] {
		ns, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			return kube.Get(ctx, c.Dynamic.Resource(namespaceGVR), r.ID.Namespace, false, opts.RequestTimeout)
		})
		switch {
		case err != nil:
			r.Err = requestError(c, "get", r, err)
			return nil, false
		case ns == nil:
			namespaceMissing(r, r.ID.Namespace, opts)
			return nil, false
		}
	}
	return nil, true
}

// applied reports whether the target's applier sends the CRD at all: one told to
// leave it alone (a Flux or Argo CD annotation) keeps the live CRD.
func applied(c *crd.CRD, opts Options) bool {
	if c.Object() == nil {
		return true
	}
	skip, err := opts.Applier.Prepare(c.Object().DeepCopy(), c.LiveObject().DeepCopy(), opts.Owner)
	return err != nil || skip == ""
}

func changedCRError(c *crd.CRD, problems []string) *Message {
	return &Message{Reason: reason.Invalid, Message: fmt.Sprintf(
		"does not pass the API server's checks against CustomResourceDefinition %s as this change makes it (%s): %s; the apply will fail once the CRD is updated",
		c.Name(), c.Source, strings.Join(problems, "; "))}
}
