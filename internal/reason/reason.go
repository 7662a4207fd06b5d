// Package reason names, once for all of drift, the stable reasons that errors,
// warnings and notes carry in every report ("reason" in JSON): what happened to an
// object, in a word a program can match, with a one-line hint of what to do.
// docs/report.md has a row for each.
package reason

import "sort"

// Reason is the stable, machine-readable cause of an error, warning or note.
type Reason string

// Rendering.
const (
	// Malformed: the YAML does not parse, or is in an encoding drift cannot read.
	Malformed Reason = "malformed"
	// TooLarge: a document, file or target over drift's limits.
	TooLarge Reason = "too-large"
	// Refused: the input asks for something drift never does (run code from the
	// repository, reach the network, read outside the repository).
	Refused Reason = "refused"
	// RenderFailed: kustomize or Helm could not build the target.
	RenderFailed Reason = "render-failed"
	// NothingRendered: a target renders no object because its manifests are in a
	// format drift does not render (jsonnet, CUE, ...).
	NothingRendered Reason = "nothing-rendered"
	// Config: drift.yaml says something about a target that cannot hold (Helm options
	// on a target that is not a chart).
	Config Reason = "config"
	// HelmHook marks a Helm hook that stays in the cluster after it ran.
	HelmHook Reason = "helm-hook"
	// HelmCRD marks a CRD from a chart's crds/ directory.
	HelmCRD Reason = "helm-crd"
	// ChartUnavailable: a chart from a chart repository or registry could not be
	// used (not allowed, not pinned, not verified, not reachable, not cached offline).
	ChartUnavailable Reason = "chart-unavailable"
	// NamespaceCreated marks a Namespace the applier creates when it is missing (Argo
	// CD's CreateNamespace=true, a HelmRelease's install.createNamespace), which the
	// repository does not render.
	NamespaceCreated Reason = "namespace-created"
)

// Rendering or the API server.
const (
	// Invalid: the object is not valid, as drift or the API server checks it.
	Invalid Reason = "invalid"
	// Duplicate: the same object twice in a target (an error), or in two targets on
	// one cluster (a warning).
	Duplicate Reason = "duplicate"
)

// What the API server answered.
const (
	Conflict    Reason = "conflict"
	Forbidden   Reason = "forbidden"
	NotFound    Reason = "not-found"
	UnknownKind Reason = "unknown-kind"
	Timeout     Reason = "timeout"
	Unavailable Reason = "unavailable"
	// ChangedDuringDiff: the object kept changing while drift read it.
	ChangedDuringDiff Reason = "changed-during-diff"
	// NotChecked: the run ended (its deadline, a signal) before the object or target
	// was previewed.
	NotChecked Reason = "not-checked"
	// ServerWarning: a warning header from the API server.
	ServerWarning Reason = "server-warning"
	// Immutable: the change sets a field the server does not let change.
	Immutable Reason = "immutable"
	// NamespaceTerminating: the object's namespace is being deleted, and the server
	// takes no new objects in it.
	NamespaceTerminating Reason = "namespace-terminating"
	// AdmissionDenied: a built-in admission plugin (not RBAC, not a webhook) refuses
	// the object, such as ServiceAccount for a missing service account.
	AdmissionDenied Reason = "admission-denied"
	// WebhookUnavailable, WebhookDenied, DryRunUnsupported: an admission webhook is
	// unreachable or too slow under failurePolicy Fail, denies, or cannot dry-run.
	WebhookUnavailable Reason = "webhook-unavailable"
	WebhookDenied      Reason = "webhook-denied"
	DryRunUnsupported  Reason = "dry-run-unsupported"
	// AggregatedAPI: the kind is served by an aggregated API server, which is not
	// trusted with dry runs unless the target allows it.
	AggregatedAPI Reason = "aggregated-api"
	// Error: a failure none of the other reasons names.
	Error Reason = "error"
)

// What the preview had to work around or wants the reader to know.
const (
	// NamespacePending and CRDPending: the object depends on a namespace or a CRD the
	// same change creates, so the server could not dry-run it.
	NamespacePending Reason = "namespace-pending"
	CRDPending       Reason = "crd-pending"
	// CRDChanged: the object's CRD is modified by the same change.
	CRDChanged Reason = "crd-changed"
	// GenerateName: the object has only generateName and is created anew by every
	// apply.
	GenerateName Reason = "generate-name"
	// CSAMigration: the object was applied client-side; the server-side applier takes
	// its fields over.
	CSAMigration Reason = "client-side-apply-migration"
	// NotApplied: the applier sends nothing for this object.
	NotApplied Reason = "not-applied"
	// ApplierMismatch: another applier than the target's wrote the live object.
	ApplierMismatch Reason = "applier-mismatch"
	// Inventory: an inventory for prune cannot be used.
	Inventory Reason = "inventory"
	// Encrypted: a SOPS-encrypted Secret no key of the runner's decrypts: previewed
	// without its values.
	Encrypted Reason = "encrypted"
	// OperatorFilled: an operator fills the object from the cluster before applying
	// it (flux-operator's copyFrom).
	OperatorFilled Reason = "operator-filled"
	// BaseNotLoaded: the ephemeral server refused the base's version of the object,
	// so it is previewed against a server without it.
	BaseNotLoaded Reason = "base-not-loaded"
)

// Kind says whether a reason marks errors, warnings, or both.
type Kind int

const (
	ErrorKind Kind = 1 << iota
	WarningKind
)

type entry struct {
	kind Kind
	// hint says in one line what to do about an error; the message says what
	// happened, the hint is what a reader scanning the report acts on.
	hint string
}

var table = map[Reason]entry{
	Malformed:            {ErrorKind, "fix the YAML at the named file and document"},
	TooLarge:             {ErrorKind, "split or flatten the document: the API server refuses objects over 3 MiB or nested more than 10,000 levels deep"},
	Refused:              {ErrorKind, "vendor or pre-render it: drift never runs code from the repository, and fetches only charts drift.yaml allows"},
	RenderFailed:         {ErrorKind, "fix the kustomization or chart named; `kustomize build` or `helm template` show the same error"},
	NothingRendered:      {ErrorKind, "render the manifests to YAML before drift reads them, or leave the path out"},
	Config:               {ErrorKind, "fix the target's entry in drift.yaml as the message says"},
	HelmHook:             {WarningKind, ""},
	HelmCRD:              {WarningKind, ""},
	NamespaceCreated:     {WarningKind, ""},
	ChartUnavailable:     {ErrorKind, "allow the chart's repository in charts.allow of drift.yaml on the base branch, pin its version, or give the runner its credentials, as the message says"},
	Invalid:              {ErrorKind, "fix the object: the real apply would be refused the same way"},
	Duplicate:            {ErrorKind | WarningKind, "define the object once"},
	Conflict:             {ErrorKind | WarningKind, "another field manager owns these fields: take them over with --force-conflicts, or stop setting them"},
	Forbidden:            {ErrorKind, "grant get and patch on the resource to the credentials drift uses"},
	NotFound:             {ErrorKind, "create what is missing (often the namespace) or fix the reference"},
	UnknownKind:          {ErrorKind, "install the CRD first, or fix apiVersion"},
	Timeout:              {ErrorKind, "the API server was too slow: raise --request-timeout or run again"},
	Unavailable:          {ErrorKind, "the API server could not be reached: check the cluster and run again"},
	ChangedDuringDiff:    {ErrorKind, "something keeps changing the object: run drift again"},
	NotChecked:           {ErrorKind, "the run ended before this was previewed: raise --timeout, or let the run finish"},
	ServerWarning:        {WarningKind, ""},
	Immutable:            {ErrorKind, "the object must be deleted and recreated: the apply will fail as it is"},
	NamespaceTerminating: {ErrorKind, "the namespace is being deleted: wait until it is gone, then apply"},
	AdmissionDenied:      {ErrorKind, "an admission plugin refuses the object: create what it names or change the object"},
	WebhookUnavailable:   {ErrorKind, "the admission webhook's service is down or slow: check its pods, then run drift again"},
	WebhookDenied:        {ErrorKind, "an admission policy refuses the object: change the object or the policy"},
	DryRunUnsupported:    {ErrorKind, "ask the webhook's owner to declare sideEffects: None or NoneOnDryRun"},
	AggregatedAPI:        {ErrorKind, "set dryRunAggregatedAPIs: true on the target if its API server honours dryRun"},
	Error:                {ErrorKind, "read the server's answer quoted in the message"},
	NamespacePending:     {WarningKind, ""},
	CRDPending:           {WarningKind, ""},
	CRDChanged:           {WarningKind, ""},
	GenerateName:         {WarningKind, ""},
	CSAMigration:         {WarningKind, ""},
	NotApplied:           {WarningKind, ""},
	ApplierMismatch:      {WarningKind, ""},
	Inventory:            {ErrorKind, "fix the inventory named, or delete it: nothing is pruned with it"},
	Encrypted:            {WarningKind, ""},
	OperatorFilled:       {WarningKind, ""},
	BaseNotLoaded:        {WarningKind, ""},
}

// Hint is the one-line hint for an error reason ("" for warnings and unknown reasons).
func (r Reason) Hint() string { return table[r].hint }

// Is reports whether r marks objects of kind k.
func (r Reason) Is(k Kind) bool { return table[r].kind&k != 0 }

// All lists every reason, sorted.
func All() []Reason {
	out := make([]Reason, 0, len(table))
	for r := range table {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
