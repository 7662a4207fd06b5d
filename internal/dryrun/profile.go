package dryrun

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Method is how an applier sends an object.
type Method int

const (
	// ServerSide is a server-side apply PATCH.
	ServerSide Method = iota
	// ClientSide is kubectl apply's three-way patch from the last-applied annotation.
	ClientSide
	// HelmUpgrade is helm upgrade's three-way patch from the previous release.
	HelmUpgrade
)

// A Profile is what one real applier does to an object: how it sends it, as which
// field manager, whether forced, what it adds to the object first and what it does
// after the apply. Each applier is one file (profile_*.go) registering one Profile.
type Profile struct {
	// Name is what drift.yaml's applier: and --applier call it.
	Name string
	// Method is how the applier sends objects.
	Method Method
	// Manager is the field manager the applier writes as; a target's fieldManager
	// replaces it where the applier lets users choose (kubectl --field-manager).
	Manager string
	// FixedManager means the applier always writes as Manager (a controller).
	FixedManager bool
	// Force means the applier takes fields over from other managers without failing.
	Force bool
	// MigratesCSA: on an object applied client-side before, the applier moves the
	// client-side managers' fields to its own (client-go's csaupgrade), so fields the
	// repository dropped are removed.
	MigratesCSA bool
	// MigrationNeeded, when set, replaces the test for an object that MigratesCSA's
	// migration applies to (by default: kubectl-client-side-apply or
	// before-first-apply wrote it).
	MigrationNeeded func(live *unstructured.Unstructured) bool
	// Migrated, when set, replaces the default choice of the entries whose fields the
	// migration moves to the applier (the client-side apply managers' updates); it
	// sees the server's answer to the apply.
	Migrated func(merged *unstructured.Unstructured, e metav1.ManagedFieldsEntry) bool
	// LastAppliedManager is the manager that keeps the last-applied annotation across
	// server-side applies (kubectl's kubectl-last-applied, only as manager kubectl).
	LastAppliedManager string
	// Prepare adds to the object what the applier adds before sending it (labels,
	// tracking annotations). It may return why the applier sends nothing for it
	// (given its live copy, nil when absent): then the live object is the prediction.
	Prepare func(obj, live *unstructured.Unstructured, o Owner) (skip string, err error)
	// Recreates, client-side, says why the applier deletes the live object and creates
	// obj anew instead of patching it ("" when it patches): the prediction is then a
	// dry-run creation.
	Recreates func(obj, live *unstructured.Unstructured) string
	// After edits the server's answer as the applier's own steps after the apply do
	// (removing managers or annotations).
	After func(merged, live *unstructured.Unstructured, o Owner)
	// FieldValidation is the fieldValidation the applier sends; "" is Strict, as
	// kubectl apply's default --validate=strict.
	FieldValidation string
	// ObjectProfile, when set, names the profile the applier uses for one object
	// instead (Argo CD's per-resource sync option ServerSideApply); nil keeps this one.
	ObjectProfile func(obj *unstructured.Unstructured) *Profile
	// Managers are the field managers whose entries on a live object show that this
	// applier wrote it (for the applier-mismatch warning).
	Managers []string
	// Doc is one line for --help and docs.
	Doc string
}

// Owner is what the applier knows the objects by: the Flux Kustomization, the
// Argo CD Application, or the Helm release.
type Owner struct {
	// Name and Namespace of the Kustomization, Application or release.
	Name, Namespace string
	// Tracking is Argo CD's resource tracking method: annotation (Argo CD 3's
	// default), label, or annotation+label.
	Tracking string
	// InstanceLabel is the label key of label tracking (app.kubernetes.io/instance).
	InstanceLabel string
	// Destination is the namespace objects that name none are applied in (Argo CD's
	// destination namespace, which cluster-scoped objects' tracking ids carry);
	// empty, it is the run's namespace.
	Destination string
}

var profiles = map[string]*Profile{}

// register adds a profile; each profile file calls it from init.
func register(p *Profile) { profiles[p.Name] = p }

// aliases are the apply modes drift knew before profiles, kept working.
var aliases = map[string]string{"server": "kubectl-server-side", "client": "kubectl"}

// ProfileFor returns the named profile ("" is kubectl-server-side; the old apply modes
// server and client are aliases).
func ProfileFor(name string) (*Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	if a, ok := aliases[name]; ok {
		name = a
	}
	p, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown applier %q: use one of %s", name, strings.Join(ProfileNames(), ", "))
	}
	return p, nil
}

// ProfileNames lists the profiles, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefaultProfile is the applier drift predicts when none is named.
const DefaultProfile = "kubectl-server-side"

// manager is the field manager a run with opts sends as.
func (p *Profile) manager(opts Options) string {
	if p.FixedManager || opts.FieldManager == "" {
		return p.Manager
	}
	return opts.FieldManager
}

// fieldValidation is the fieldValidation the profile's applier sends.
func (p *Profile) fieldValidation() string {
	if p.FieldValidation == "" {
		return metav1.FieldValidationStrict
	}
	return p.FieldValidation
}

// addLabels sets labels on obj, keeping the others.
func addLabels(obj *unstructured.Unstructured, kv map[string]string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range kv {
		labels[k] = v
	}
	obj.SetLabels(labels)
}
