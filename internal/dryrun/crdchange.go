package dryrun

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
)

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// liveCRD is the cluster's copy of a CRD the change renders, read once per run.
type liveCRD struct {
	once   sync.Once
	crd    *apiextensionsv1.CustomResourceDefinition // nil when not live
	object *unstructured.Unstructured
	err    error
}

// previewChangedCR previews a custom resource whose CRD the change modifies, when the
// modification touches the object's version (its schema or subresources, or a version
// the cluster does not serve yet): the cluster still serves the old CRD, so a server
// dry run would prune or reject new fields and miss new defaults. The apply is then
// done locally with the API server's own code, against the CRD as the change makes
// it. It reports false, leaving r alone, when the usual preview is right: the CRD is
// not in the change, not live (a pending CRD), or serves the object's version as it
// will.
func previewChangedCR(ctx context.Context, c *kube.Clients, r *Result, opts Options) bool {
	crd, ver := r.pendingCRD, r.pendingVer
	if crd == nil {
		crd, ver = opts.Pending.crdFor(r.ID.GroupKind(), r.ID.Version)
	}
	if crd == nil || ver == nil || crd.rendered == nil || r.Object.Obj.GetName() == "" {
		return false
	}
	live, err := crd.liveCopy(ctx, c, opts)
	if err != nil {
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"could not read CustomResourceDefinition %s to compare it with this change (%s), so this object was previewed as if the CRD stayed as it is: %s",
			crd.rendered.Name, crd.Source, kube.WithoutValues(err.Error()))})
		return false
	}
	if live == nil || servedVersion(live) == "" || !versionChanged(crd.rendered, live, r.ID.Version) || !crd.applied(opts) {
		return false
	}
	if opts.Applier.Sending().Method != applier.ServerSide {
		// The local apply is server-side apply's; a client-side or Helm patch under
		// the new schema is not reproduced.
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"this change modifies CustomResourceDefinition %s (%s), but the %s applier's patch is previewed against the CRD the cluster serves now: fields new in the change may be refused or dropped, and new defaults are missing",
			crd.rendered.Name, crd.Source, opts.Applier.Name())})
		return false
	}
	if ver.err != nil || ver.validator == nil || ver.structural == nil {
		why := "it has no schema"
		if ver.err != nil {
			why = ver.err.Error()
		}
		r.Err = changedCRError(crd, []string{fmt.Sprintf("version %s of the CRD has no usable schema: %s", r.ID.Version, why)})
		return true
	}
	ls, err := newLocalServer(crd, ver, r.ID.Version)
	if err != nil {
		r.Err = changedCRError(crd, []string{"the API server could not serve it: " + err.Error()})
		return true
	}
	from := r.ID.Version
	if !servesVersion(live, from) {
		from = servedVersion(live)
	}
	current, ok := readForChangedCRD(ctx, c, r, live, from, opts)
	if !ok {
		return true
	}
	if ls.needsWebhook(current, from) {
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"this change modifies CustomResourceDefinition %s (%s), but applying this object under it converts between versions with the CRD's conversion webhook, which drift does not call: it was previewed against the CRD the cluster serves now, so new fields and defaults of the change may be missing",
			crd.rendered.Name, crd.Source)})
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
	merged, problems, err := ls.apply(r, current, obj, opts)
	switch {
	case err != nil:
		r.Err = changedCRError(crd, []string{kube.WithoutValues(err.Error())})
	case len(problems) > 0:
		r.Err = changedCRError(crd, problems)
	default:
		served := "still serves the old schema of " + r.ID.Version
		if !servesVersion(live, r.ID.Version) {
			served = "does not serve " + r.ID.Version + " yet"
		}
		r.Warnings = append(r.Warnings, Message{Reason: reason.CRDChanged, Message: fmt.Sprintf(
			"this change modifies CustomResourceDefinition %s (%s) and the cluster %s: this object was previewed against the CRD as the change makes it, applied locally with the API server's own code (server-side apply, pruning, defaulting, schema validation); admission webhooks and CEL validation rules were not run",
			crd.rendered.Name, crd.Source, served)})
		_ = settle(c, r, current, merged, nil, 1, opts)
	}
	return true
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

func servesVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	v := crdVersionNamed(crd, version)
	return v != nil && v.Served
}

// servedVersion is the version to read a CRD's objects at: its storage version when
// served, else the first served.
func servedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	first := ""
	for _, v := range crd.Spec.Versions {
		switch {
		case v.Served && v.Storage:
			return v.Name
		case v.Served && first == "":
			first = v.Name
		}
	}
	return first
}

// liveCopy reads the cluster's copy of the CRD once for all its custom resources.
func (p *PendingCRD) liveCopy(ctx context.Context, c *kube.Clients, opts Options) (*apiextensionsv1.CustomResourceDefinition, error) {
	p.live.once.Do(func() {
		u, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			defer cancel()
			return c.Dynamic.Resource(crdGVR).Get(ctx, p.rendered.Name, metav1.GetOptions{})
		})
		switch {
		case apierrors.IsNotFound(err):
			return
		case err != nil:
			p.live.err = err
			return
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if p.live.err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); p.live.err == nil {
			p.live.crd, p.live.object = crd, u
		}
	})
	return p.live.crd, p.live.err
}

// applied reports whether the target's applier sends the CRD at all: one told to
// leave it alone (a Flux or Argo CD annotation) keeps the live CRD.
func (p *PendingCRD) applied(opts Options) bool {
	if p.object == nil {
		return true
	}
	skip, err := opts.Applier.Prepare(p.object.DeepCopy(), p.live.object.DeepCopy(), opts.Owner)
	return err != nil || skip == ""
}

// versionChanged reports whether the rendered CRD serves version differently from the
// live one: another schema, other subresources, or another pruning rule.
func versionChanged(rendered, live *apiextensionsv1.CustomResourceDefinition, version string) bool {
	a, b := crdVersionNamed(rendered, version), crdVersionNamed(live, version)
	if a == nil || b == nil || !b.Served {
		return true
	}
	return rendered.Spec.PreserveUnknownFields != live.Spec.PreserveUnknownFields ||
		!apiequality.Semantic.DeepEqual(a.Schema, b.Schema) ||
		!apiequality.Semantic.DeepEqual(a.Subresources, b.Subresources)
}

func crdVersionNamed(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func hasStatus(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	v := crdVersionNamed(crd, version)
	return v != nil && v.Subresources != nil && v.Subresources.Status != nil
}

func changedCRError(crd *PendingCRD, problems []string) *Message {
	return &Message{Reason: reason.Invalid, Message: fmt.Sprintf(
		"does not pass the API server's checks against CustomResourceDefinition %s as this change makes it (%s): %s; the apply will fail once the CRD is updated",
		crd.rendered.Name, crd.Source, strings.Join(problems, "; "))}
}
