package crd

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/drift-gitops/drift/internal/applier"
)

// applyModel is what kube-apiserver's custom resource handler builds to serve a CRD
// to server-side apply: a type converter from the OpenAPI of all its versions (list
// types, map keys, ObjectMeta). Built once per run, from the rendered CRD.
type applyModel struct {
	once      sync.Once
	converter managedfields.TypeConverter
	err       error
}

// servedSchema is a version's structural schema with defaults pruned, which the
// handler prunes and defaults with.
type servedSchema struct {
	once sync.Once
	s    *structuralschema.Structural
	err  error
}

// LocalServer is what kube-apiserver's custom resource handler would have to serve
// one version of a CRD as the change makes it.
type LocalServer struct {
	crd *CRD
	ver *Version
	gvk schema.GroupVersionKind
	// schema and storage are the structural schemas, defaults pruned, of the version
	// and of the storage version (the same when it is the storage version or the
	// storage version is not served).
	schema, storage *structuralschema.Structural
	storageVersion  string
	converter       managedfields.TypeConverter
	// status says the version has the status subresource; fm is the handler's field
	// manager.
	status bool
	fm     *managedfields.FieldManager
}

// NewLocalServer serves version (ver) of crd as the change makes it.
func NewLocalServer(crd *CRD, ver *Version, version string) (*LocalServer, error) {
	m := crd.applyModel()
	if m.err != nil {
		return nil, m.err
	}
	s, err := ver.servedStructural()
	if err != nil {
		return nil, err
	}
	ls := &LocalServer{crd: crd, ver: ver, schema: s, storage: s, storageVersion: version, converter: m.converter,
		gvk: schema.GroupVersionKind{Group: crd.rendered.Spec.Group, Version: version, Kind: crd.rendered.Spec.Names.Kind}}
	for _, v := range crd.rendered.Spec.Versions {
		if sv := crd.versions[v.Name]; v.Storage && sv != nil && v.Name != version {
			if ss, err := sv.servedStructural(); err == nil {
				ls.storage, ls.storageVersion = ss, v.Name
			}
		}
	}
	ls.status = hasStatus(crd.rendered, version)
	reset := map[fieldpath.APIVersion]*fieldpath.Set{}
	if ls.status {
		reset[fieldpath.APIVersion(ls.gvk.GroupVersion().String())] = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	if ls.fm, err = managedfields.NewDefaultCRDFieldManager(ls.converter, sameVersion{}, schemaDefaulter{ls.schema},
		unstructuredCreater{}, ls.gvk, ls.gvk.GroupVersion(), "", fieldpath.NewExcludeFilterSetMap(reset)); err != nil {
		return nil, err
	}
	return ls, nil
}

// stored is an object as the server reads it back from storage: in the storage
// version pruned and defaulted by its schema, then converted (strategy None: only
// apiVersion) and pruned by the version's schema. It is what an apply starts from,
// and what a write answers, since the answer is decoded from what was stored.
func (ls *LocalServer) stored(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	preserve := ls.crd.rendered.Spec.PreserveUnknownFields
	out.SetAPIVersion(schema.GroupVersion{Group: ls.gvk.Group, Version: ls.storageVersion}.String())
	coerce(out.Object, ls.storage, preserve, true)
	out.SetAPIVersion(ls.gvk.GroupVersion().String())
	coerce(out.Object, ls.schema, preserve, false)
	return out
}

// Check is what the server checks of obj before it applies it: its metadata and
// the fields the version's schema does not know (strict field validation).
func (ls *LocalServer) Check(obj *unstructured.Unstructured) []string {
	problems := CheckMeta(obj.Object, ls.crd.Namespaced)
	for _, f := range unknownFields(obj.Object, ls.ver) {
		problems = append(problems, fmt.Sprintf("unknown field %q", f))
	}
	return problems
}

// Base is what a server-side apply over live starts from: live as read back from
// storage, or an empty object of the kind when live is nil.
func (ls *LocalServer) Base(live *unstructured.Unstructured) *unstructured.Unstructured {
	if live != nil {
		return ls.stored(live)
	}
	base := &unstructured.Unstructured{}
	base.SetGroupVersionKind(ls.gvk)
	return base
}

// Apply merges obj into base (Base) as the API server's server-side apply does once
// it serves the rendered CRD, with the field manager of the custom resource handler,
// as manager, forced or not; a conflict is the server's field manager conflict.
func (ls *LocalServer) Apply(base, obj *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	out, err := ls.fm.Apply(base.DeepCopy(), obj.DeepCopy(), manager, force)
	if err != nil {
		return nil, err
	}
	return out.(*unstructured.Unstructured), nil
}

// Migrate is kubectl's move of client-side managers' fields to manager (client-go's
// csaupgrade) and its second apply of obj, done on merged, the first apply's result:
// fields the last client-side apply set that the repository no longer has, and no
// other manager owns, are removed. It returns the result and the fields removed.
func (ls *LocalServer) Migrate(merged, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, []string, error) {
	upgraded := merged.DeepCopy()
	if err := csaupgrade.UpgradeManagedFields(upgraded, sets.New(applier.ClientSideManagers...), manager); err != nil {
		return nil, nil, err
	}
	out, err := ls.fm.Apply(upgraded, obj.DeepCopy(), manager, true)
	if err != nil {
		return nil, nil, err
	}
	again := out.(*unstructured.Unstructured)
	var removed []string
	before, err1 := ls.converter.ObjectToTyped(merged, typed.AllowDuplicates)
	after, err2 := ls.converter.ObjectToTyped(again, typed.AllowDuplicates)
	if err1 == nil && err2 == nil {
		if cmp, err := before.Compare(after); err == nil {
			cmp.Removed.Leaves().Iterate(func(p fieldpath.Path) {
				if !strings.HasPrefix(p.String(), ".metadata.managedFields") {
					removed = append(removed, p.String())
				}
			})
		}
	}
	sort.Strings(removed)
	return again, removed, nil
}

// Finish defaults, prepares and validates merged, the apply's result over base
// (created when there was no live object), as the custom resource strategy does, and
// answers it as stored; problems are the reasons the server would refuse it.
func (ls *LocalServer) Finish(merged, base *unstructured.Unstructured, created bool) (*unstructured.Unstructured, []string) {
	var problems []string
	if created {
		prepareForCreate(merged, ls.status)
		for _, e := range validation.ValidateCustomResource(nil, merged.Object, ls.ver.validator) {
			problems = append(problems, e.Error())
		}
	} else {
		prepareForUpdate(merged, base, ls.status)
		// Ratcheting, as the server does by default: a value the update leaves as it was
		// may stay invalid under the new schema.
		for _, e := range validation.ValidateCustomResourceUpdate(nil, merged.Object, base.Object, ls.ver.validator, validation.WithRatcheting(nil)) {
			problems = append(problems, e.Error())
		}
	}
	return ls.stored(merged), problems
}

// coerce is what the API server's schema coercion does to a custom resource: fields
// the schema does not know are pruned and nulls without a default dropped; when it
// decodes from storage, defaults are filled in too.
func coerce(obj map[string]any, s *structuralschema.Structural, preserveUnknown, defaults bool) {
	if !preserveUnknown {
		pruning.Prune(obj, s, true)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s)
	}
	if defaults {
		structuraldefaulting.Default(obj, s)
	}
}

// prepareForCreate and prepareForUpdate are the custom resource strategy's: status
// is not written through the main resource when the status subresource is on, and the
// generation starts at 1 and grows with every change outside metadata.
func prepareForCreate(obj *unstructured.Unstructured, status bool) {
	if status {
		delete(obj.Object, "status")
	}
	obj.SetGeneration(1)
}

func prepareForUpdate(obj, old *unstructured.Unstructured, status bool) {
	if status {
		if s, ok := old.Object["status"]; ok {
			obj.Object["status"] = s
		} else {
			delete(obj.Object, "status")
		}
	}
	if !apiequality.Semantic.DeepEqual(withoutMetadata(obj.Object), withoutMetadata(old.Object)) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
}

func withoutMetadata(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

// applyModel builds, once, the handler's type converter: the OpenAPI of every
// version of the CRD (builder.BuildOpenAPIV3, with ObjectMeta and the other
// definitions it references), merged, since server-side apply converts to the version
// each manager last applied at.
func (p *CRD) applyModel() *applyModel {
	m, crd := &p.apply, p.rendered
	m.once.Do(func() {
		if len(crd.Spec.Versions) == 0 {
			m.err = fmt.Errorf("the CRD has no versions")
			return
		}
		merged, err := builder.BuildOpenAPIV3(crd, crd.Spec.Versions[0].Name, builder.Options{})
		for _, v := range crd.Spec.Versions[1:] {
			if err != nil {
				break
			}
			s, e := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
			if err = e; err == nil {
				merged, err = builder.MergeSpecsV3(merged, s)
			}
		}
		if m.err = err; err != nil {
			return
		}
		m.converter, m.err = managedfields.NewTypeConverter(merged.Components.Schemas, crd.Spec.PreserveUnknownFields)
	})
	return m
}

// servedStructural is the version's structural schema with defaults pruned, built once.
func (v *Version) servedStructural() (*structuralschema.Structural, error) {
	v.served.once.Do(func() {
		if v.structural == nil {
			v.served.err = fmt.Errorf("no structural schema")
			return
		}
		v.served.s = v.structural.DeepCopy()
		v.served.err = structuraldefaulting.PruneDefaults(v.served.s)
	})
	return v.served.s, v.served.err
}

// sameVersion is the custom resource handler's converter for an apply in the
// version the object is served at (its hub version): only apiVersion changes.
type sameVersion struct{}

func (sameVersion) Convert(in, out, context any) error {
	return fmt.Errorf("converting %T to %T is not supported", in, out)
}

func (sameVersion) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("%v cannot be converted to %v", in.GetObjectKind().GroupVersionKind(), target)
	}
	out := in.DeepCopyObject()
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// schemaDefaulter defaults custom resources by the structural schema, as the
// handler's unstructuredDefaulter does after an apply.
type schemaDefaulter struct{ s *structuralschema.Structural }

func (d schemaDefaulter) Default(obj runtime.Object) {
	if u, ok := obj.(runtime.Unstructured); ok {
		structuraldefaulting.Default(u.UnstructuredContent(), d.s)
	}
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// NeedsWebhook reports whether applying obj, read at version from, converts between
// versions under a CRD whose conversion is a webhook, which drift does not call: to
// or from the storage version, or to the versions managers applied at.
func (ls *LocalServer) NeedsWebhook(obj *unstructured.Unstructured, from string) bool {
	conv := ls.crd.rendered.Spec.Conversion
	if conv == nil || conv.Strategy == apiextensionsv1.NoneConverter {
		return false
	}
	if ls.storageVersion != ls.gvk.Version || (obj != nil && from != ls.gvk.Version) {
		return true
	}
	for _, mf := range obj.GetManagedFields() {
		if mf.APIVersion != ls.gvk.GroupVersion().String() {
			return true
		}
	}
	return false
}
