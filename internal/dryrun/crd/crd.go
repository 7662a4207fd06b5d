// Package crd checks custom resources against a CustomResourceDefinition as a change
// renders it, with the API server's own code, where the cluster cannot: before the
// CRD exists (Check: metadata, unknown fields, the schema) and while the cluster
// serves an older one (LocalServer: server-side apply, pruning, defaulting and
// validation done locally, as kube-apiserver's custom resource handler would once it
// serves the rendered CRD).
package crd

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/operation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/drift-gitops/drift/internal/kube"
)

// CRD is a CustomResourceDefinition a change renders.
type CRD struct {
	// Source is where the CRD is rendered from.
	Source     string
	Namespaced bool
	versions   map[string]*Version
	// rendered is the CRD as the change makes it, defaulted as the server defaults it,
	// and object as written; live is the cluster's copy, compared with it when the kind
	// is already served.
	rendered *apiextensionsv1.CustomResourceDefinition
	object   *unstructured.Unstructured
	live     liveCRD
	// apply is what a local server-side apply of its custom resources needs.
	apply applyModel
}

// Version is one served version of a CRD, with what its checks need.
type Version struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
	// err is why the version's schema cannot be used for checks.
	err error
	// served is the schema as the server prunes and defaults with it.
	served servedSchema
}

// liveCRD is the cluster's copy of a CRD the change renders, read once per run.
type liveCRD struct {
	once   sync.Once
	crd    *apiextensionsv1.CustomResourceDefinition // nil when not live
	object *unstructured.Unstructured
	err    error
}

// Parse reads a rendered CustomResourceDefinition, defaulted as the server defaults
// it, and the kind it defines; ok is false when it cannot be read.
func Parse(obj *unstructured.Unstructured, source string) (c *CRD, kind schema.GroupKind, ok bool) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &crd); err != nil {
		return nil, schema.GroupKind{}, false
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
	c = &CRD{Source: source, Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, versions: map[string]*Version{},
		rendered: &crd, object: obj}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		c.versions[v.Name] = newVersion(v.Schema)
	}
	return c, schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}, true
}

func newVersion(s *apiextensionsv1.CustomResourceValidation) *Version {
	v := &Version{}
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

// Name is the CRD's name.
func (c *CRD) Name() string { return c.rendered.Name }

// Object is the CRD as the change renders it.
func (c *CRD) Object() *unstructured.Unstructured { return c.object }

// Version is the served version named v; nil when the CRD does not serve it.
func (c *CRD) Version(v string) *Version { return c.versions[v] }

// Usable says why the version's schema cannot check objects (nil: it can).
func (v *Version) Usable() error {
	switch {
	case v.err != nil:
		return v.err
	case v.validator == nil || v.structural == nil:
		return fmt.Errorf("it has no schema")
	}
	return nil
}

// Check checks a custom resource of a kind the change defines as the API server would
// on create: its metadata with the server's own code (a CR's name is a DNS subdomain,
// its namespace a DNS label, labels, annotations, finalizers and owner references well
// formed), then against the rendered CRD's schema at version v (nil: metadata only):
// unknown fields (strict field validation) and schema violations. It returns the
// problems found, sorted; none when the object passes.
func Check(obj map[string]any, c *CRD, v *Version) []string {
	out := CheckMeta(obj, c.Namespaced)
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
func unknownFields(obj map[string]any, v *Version) []string {
	clone := runtime.DeepCopyJSON(obj)
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	return pruning.PruneWithOptions(clone, v.structural, true, opts)
}

// CheckMeta is what apiextensions-apiserver's custom resource validator does with
// metadata on create (customresource.customResourceValidator): read it into an
// ObjectMeta, then ValidateObjectMetaDeclaratively with the DNS subdomain name rule,
// declarative validation enforced as by default since Kubernetes 1.36.
func CheckMeta(obj map[string]any, namespaced bool) []string {
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

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Live reads the cluster's copy of the CRD once for all its custom resources (nil
// when the cluster does not have it), each request within timeout.
func (c *CRD) Live(ctx context.Context, cl *kube.Clients, timeout time.Duration) (*apiextensionsv1.CustomResourceDefinition, error) {
	c.live.once.Do(func() {
		u, err := kube.Retry(ctx, cl, func(ctx context.Context) (*unstructured.Unstructured, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return cl.Dynamic.Resource(crdGVR).Get(ctx, c.rendered.Name, metav1.GetOptions{})
		})
		switch {
		case apierrors.IsNotFound(err):
			return
		case err != nil:
			c.live.err = err
			return
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if c.live.err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); c.live.err == nil {
			c.live.crd, c.live.object = crd, u
		}
	})
	return c.live.crd, c.live.err
}

// LiveObject is the cluster's copy of the CRD as read by Live (nil before, or when
// it has none).
func (c *CRD) LiveObject() *unstructured.Unstructured { return c.live.object }

// Changes reports whether the rendered CRD serves version differently from live:
// another schema, other subresources, or another pruning rule.
func (c *CRD) Changes(live *apiextensionsv1.CustomResourceDefinition, version string) bool {
	a, b := versionNamed(c.rendered, version), versionNamed(live, version)
	if a == nil || b == nil || !b.Served {
		return true
	}
	return c.rendered.Spec.PreserveUnknownFields != live.Spec.PreserveUnknownFields ||
		!apiequality.Semantic.DeepEqual(a.Schema, b.Schema) ||
		!apiequality.Semantic.DeepEqual(a.Subresources, b.Subresources)
}

// ServesVersion reports whether crd serves version.
func ServesVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	v := versionNamed(crd, version)
	return v != nil && v.Served
}

// ServedVersion is the version to read a CRD's objects at: its storage version when
// served, else the first served.
func ServedVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
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

func versionNamed(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func hasStatus(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	v := versionNamed(crd, version)
	return v != nil && v.Subresources != nil && v.Subresources.Status != nil
}
