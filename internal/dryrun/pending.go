package dryrun

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/operation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/drift-gitops/drift/internal/render"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Pending is what the change itself creates that objects may depend on: namespaces,
// and kinds defined by CustomResourceDefinitions. Objects that need them cannot be
// dry-run by the server until they exist; drift reports them as additions with a
// warning, checked against the rendered CRD's schema where there is one.
type Pending struct {
	Namespaces map[string]bool
	CRDs       map[schema.GroupKind]*PendingCRD
}

// PendingCRD is a kind the change defines.
type PendingCRD struct {
	// Source is where the CRD is rendered from.
	Source     string
	Namespaced bool
	versions   map[string]*crdVersion
	// rendered is the CRD as the change makes it, defaulted as the server defaults it,
	// and object as written; live is the cluster's copy, compared with it when the kind
	// is already served.
	rendered *apiextensionsv1.CustomResourceDefinition
	object   *unstructured.Unstructured
	live     liveCRD
	// apply is what a local server-side apply of its custom resources needs.
	apply applyModel
}

type crdVersion struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
	// err is why the version's schema cannot be used for checks.
	err error
	// served is the schema as the server prunes and defaults with it.
	served servedSchema
}

// PendingFrom collects the Namespaces and CRDs among rendered objects. A CRD that
// cannot be read is left out: its custom resources then fail as unknown kinds.
func PendingFrom(objs []render.Object) *Pending {
	p := &Pending{Namespaces: map[string]bool{}, CRDs: map[schema.GroupKind]*PendingCRD{}}
	for _, o := range objs {
		gk := o.ID().GroupKind()
		switch {
		case gk == object.NamespaceKind:
			p.Namespaces[o.Obj.GetName()] = true
		case gk == object.CRDKind:
			var crd apiextensionsv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Obj.Object, &crd); err != nil {
				continue
			}
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
			pc := &PendingCRD{Source: o.Where(), Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, versions: map[string]*crdVersion{},
				rendered: &crd, object: o.Obj}
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				pc.versions[v.Name] = newCRDVersion(v.Schema)
			}
			p.CRDs[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = pc
		}
	}
	return p
}

func newCRDVersion(s *apiextensionsv1.CustomResourceValidation) *crdVersion {
	v := &crdVersion{}
	if s == nil || s.OpenAPIV3Schema == nil {
		return v
	}
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s.OpenAPIV3Schema, &internal, nil); err != nil {
		v.err = err
		return v
	}
	if v.structural, v.err = structuralschema.NewStructural(&internal); v.err != nil {
		return v
	}
	v.validator, _, v.err = validation.NewSchemaValidator(&internal)
	return v
}

// crdFor returns the pending CRD version serving an object's kind, if the change
// defines it.
func (p *Pending) crdFor(gk schema.GroupKind, version string) (*PendingCRD, *crdVersion) {
	if p == nil {
		return nil, nil
	}
	crd := p.CRDs[gk]
	if crd == nil {
		return nil, nil
	}
	return crd, crd.versions[version]
}

// checkPendingCR checks a custom resource of a kind the change defines as the API
// server would on create: its metadata with the server's own code (a CR's name is a DNS
// subdomain, its namespace a DNS label, labels, annotations, finalizers and owner
// references well formed), then against the rendered CRD's schema: unknown fields
// (strict field validation) and schema violations. It returns nil when the object passes.
func checkPendingCR(obj map[string]any, crd *PendingCRD, v *crdVersion) []string {
	out := checkPendingMeta(obj, crd.Namespaced)
	if v == nil || v.structural == nil || v.validator == nil {
		sort.Strings(out)
		return out
	}
	for _, f := range unknownFields(obj, v) {
		out = append(out, fmt.Sprintf("unknown field %q", f))
	}
	for _, e := range validation.ValidateCustomResource(nil, obj, v.validator) {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

// unknownFields are the paths of fields the version's schema does not know, which
// strict field validation rejects.
func unknownFields(obj map[string]any, v *crdVersion) []string {
	clone := runtime.DeepCopyJSON(obj)
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	return pruning.PruneWithOptions(clone, v.structural, true, opts)
}

// checkPendingMeta is what apiextensions-apiserver's custom resource validator does
// with metadata on create (customresource.customResourceValidator): read it into an
// ObjectMeta, then ValidateObjectMetaDeclaratively with the DNS subdomain name rule,
// declarative validation enforced as by default since Kubernetes 1.36.
func checkPendingMeta(obj map[string]any, namespaced bool) []string {
	raw, _ := obj["metadata"].(map[string]any)
	meta := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, meta); err != nil {
		return []string{"metadata: " + err.Error()}
	}
	var out []string
	errs := apivalidation.ValidateObjectMetaDeclaratively(context.Background(), operation.Create, meta, nil,
		namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"), true)
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func pendingCRWarning(id string, crd *PendingCRD, checked bool) Message {
	how := "checked only against the CRD's schema in this change"
	if !checked {
		how = "not checked at all: the CRD in this change has no usable schema for this version"
	}
	return Message{Reason: reason.CRDPending, Message: fmt.Sprintf(
		"the cluster does not serve %s yet: its CustomResourceDefinition is created by this change (%s), so the server could not dry-run it; %s, and shown as written, without server defaults",
		id, crd.Source, how)}
}

func pendingCRError(crd *PendingCRD, problems []string) *Message {
	return &Message{Reason: reason.Invalid, Message: fmt.Sprintf(
		"does not pass the API server's checks of metadata or the schema of its CustomResourceDefinition in this change (%s): %s; the apply will fail",
		crd.Source, strings.Join(problems, "; "))}
}
