package report

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/drift-gitops/drift/internal/reason"
)

// SchemaVersion names the JSON report format. Fields may be added; none change meaning.
const SchemaVersion = "drift.report/v1"

// KindDrift marks drift reports.
const KindDrift = "drift"

// Categories of objects.
const (
	Add       = "add"
	Modify    = "modify"
	Unchanged = "unchanged"
	Delete    = "delete"
	Error     = "error"
)

// Report is the outcome of a run: the JSON v1 model, which every writer renders.
type Report struct {
	SchemaVersion string `json:"schemaVersion"`
	// Kind is "drift" for a drift check (drift detect): every difference is drift
	// between the repository and the cluster. Absent for a preview of a change.
	Kind   string `json:"kind,omitempty"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	// Cluster is "ephemeral" when the preview ran on a throwaway API server seeded with
	// Base rather than on a live cluster.
	Cluster    string `json:"cluster,omitempty"`
	Base       string `json:"base,omitempty"`
	BaseCommit string `json:"baseCommit,omitempty"`
	// Complete is false when any object could not be previewed, or a file the change
	// touches that a controller could deploy from was not previewed: the report then
	// does not tell the whole story.
	Complete bool `json:"complete"`
	// Config is set when a pull request edits drift.yaml: what of it was not used.
	Config *ConfigChange `json:"config,omitempty"`
	// Shard marks one shard's share of a run split across runners, which drift
	// report merge combines with the others'; absent from a whole run's report.
	Shard   *Shard  `json:"shard,omitempty"`
	Summary Summary `json:"summary"`
	// Policy is what --fail-on and failOn asked for, and whether the report fails it.
	Policy  *Policy  `json:"policy,omitempty"`
	Targets []Target `json:"targets"`
	// Coverage accounts for every file the change touches, when the run has a base.
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Summary counts objects per category.
type Summary struct {
	Add       int `json:"add"`
	Modify    int `json:"modify"`
	Unchanged int `json:"unchanged"`
	Delete    int `json:"delete"`
	Error     int `json:"error"`
	// NotPreviewed counts the targets the change touches that drift could not preview
	// (their source is another repository's, a generator drift does not expand): the
	// report is then incomplete.
	NotPreviewed int `json:"notPreviewed,omitempty"`
	// NotCovered counts the files the change touches that a controller could deploy
	// from and that no target drift found reads: the report is then incomplete.
	NotCovered int `json:"notCovered,omitempty"`
	// Risky counts the objects with at least one risk.
	Risky int `json:"risky"`
	// ApplierMismatch counts the objects whose live fields another applier than
	// their target's manages (their predictions may be wrong).
	ApplierMismatch int `json:"applierMismatch,omitempty"`
}

// Changes is the number of objects that would change.
func (s Summary) Changes() int { return s.Add + s.Modify + s.Delete }

// Target is one set of objects diffed together.
type Target struct {
	Name string `json:"name"`
	// Path is the repository path the target renders; Renderer is plain, kustomize or
	// helm; Context is the kube context it was diffed against (empty: the current one).
	Path     string `json:"path,omitempty"`
	Renderer string `json:"renderer,omitempty"`
	Context  string `json:"context,omitempty"`
	// Applier is the applier the target was previewed for (config.md#appliers).
	Applier string `json:"applier,omitempty"`
	// Skipped says why the target was not diffed (then it has no objects);
	// NotPreviewed that the change touches it all the same: the report is incomplete.
	Skipped      string   `json:"skipped,omitempty"`
	NotPreviewed bool     `json:"notPreviewed,omitempty"`
	Objects      []Object `json:"objects"`
	// Kept lists prune candidates that will not be deleted, and Notes what pruning
	// looked at (a first apply, an object already gone).
	Kept  []Kept   `json:"kept,omitempty"`
	Notes []string `json:"notes,omitempty"`
	// Drift lists, when a pull request's report splits the stories, the objects the
	// cluster already differs on from the base: live against the base's prediction.
	// They are not counted in the summary, which is the pull request's own changes.
	Drift []Object `json:"drift,omitempty"`
}

// ID is an object's identity as the report names it: its group, version, kind,
// namespace (empty for a cluster-scoped object) and name. It has object.ID's fields,
// so either converts to the other.
type ID struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// less orders identities by group, kind, namespace, name and version, as
// object.Less does.
func less(a, b ID) bool {
	return slices.Compare([]string{a.Group, a.Kind, a.Namespace, a.Name, a.Version},
		[]string{b.Group, b.Kind, b.Namespace, b.Name, b.Version}) < 0
}

// Risk is one thing a reviewer must not miss about an object's change: the rule
// that found it and what it says (docs/report.md#risks).
type Risk struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// Message is a warning on an object: a stable reason and what it says.
type Message struct {
	Reason  reason.Reason `json:"reason"`
	Message string        `json:"message"`
}

// Kept is an object an inventory lists, that the change no longer renders, and that
// will not be deleted because the inventory does not own it.
type Kept struct {
	ID
	Inventory string `json:"inventory"`
	Reason    string `json:"reason"`
}

// Object is one object's line in the report.
type Object struct {
	Category string `json:"category"`
	// ID is the object's identity (empty for a file that did not render).
	ID
	// Source is the file the object came from, relative to the repository root.
	Source string `json:"source"`
	// Document is the 1-based YAML document index in Source (0 when unknown).
	Document int `json:"document,omitempty"`
	// Inventory names the inventory that owns a deleted object.
	Inventory string `json:"inventory,omitempty"`
	// Story is "change" (what the pull request does: the base's prediction against the
	// head's) or "drift" (already in the cluster: live against the base's prediction)
	// when the report splits them; absent otherwise.
	Story string `json:"story,omitempty"`
	// What says in a few words what a modification changes ("image web:1.4 → 1.5,
	// 2 more fields"); Changes lists each field it changes, masked as the diff is.
	What    string        `json:"what,omitempty"`
	Changes []FieldChange `json:"changes,omitempty"`
	// Risks are what a reviewer must not miss (docs/report.md#risks).
	Risks []Risk `json:"risks,omitempty"`
	Diff  string `json:"diff,omitempty"`
	// Warnings never stop the preview; each has a stable reason.
	Warnings []Message `json:"warnings"`
	// Error is the reason the object could not be previewed, with ErrorReason.
	Error       string        `json:"error"`
	ErrorReason reason.Reason `json:"errorReason,omitempty"`

	// FromYAML and ToYAML are the normalized, masked and scrubbed YAML of the two
	// sides the diff compares, for --dump and KUBECTL_EXTERNAL_DIFF; empty where that
	// side does not exist. File is kubectl diff's file name for the object, and Sides
	// what its diff compares. None of them is in the JSON report.
	FromYAML string `json:"-"`
	ToYAML   string `json:"-"`
	File     string `json:"-"`
	Sides    Sides  `json:"-"`
}

// NewObject is an object's line as it starts: its identity and where it came from,
// no warnings yet, kubectl diff's file name, diffed live against merged.
func NewObject(id ID, source string, doc int) Object {
	return Object{ID: id,
		Source: source, Document: doc, Warnings: []Message{}, File: kubectlName(id), Sides: SidesApply}
}

// kubectlName is kubectl diff's file name for an object: its apiVersion with "/" as
// ".", kind, namespace and name joined by dots, the namespace empty for a
// cluster-scoped object: apps.v1.Deployment.shop.web, v1.Namespace..production.
func kubectlName(id ID) string {
	group := ""
	if id.Group != "" {
		group = id.Group + "."
	}
	return group + id.Version + "." + id.Kind + "." + id.Namespace + "." + id.Name
}

// Sides name what a diff compares, in its headers and --dump's directories.
type Sides struct{ From, To string }

// The sides a diff may compare.
var (
	// SidesApply is kubectl diff's: the live object against the merged prediction.
	SidesApply = Sides{"live", "merged"}
	// SidesChange is a split report's change: the base's prediction against the head's.
	SidesChange = Sides{"base", "head"}
	// SidesChangeLive is a split change without the base's prediction.
	SidesChangeLive = Sides{"live", "head"}
	// SidesDrift is a split report's drift: the live object against the base's prediction.
	SidesDrift = Sides{"live", "base"}
)

// DiffSides are what the object's diff compares: kubectl diff's live and merged
// unless the report splits the stories.
func (o Object) DiffSides() Sides {
	if o.Sides == (Sides{}) {
		return SidesApply
	}
	return o.Sides
}

// Stories an object belongs to when a report splits them.
const (
	StoryChange = "change"
	StoryDrift  = "drift"
)

// Title is the object's human name: "apps/v1 Deployment shop/web".
func (o Object) Title() string {
	if o.Kind == "" {
		if o.Document == 0 {
			return "(not rendered)"
		}
		return "(unreadable document)"
	}
	gv := o.Version
	if o.Group != "" {
		gv = o.Group + "/" + o.Version
	}
	if o.Namespace == "" {
		return shown(gv) + " " + shown(o.Kind) + " " + shown(o.Name)
	}
	return shown(gv) + " " + shown(o.Kind) + " " + shown(o.Namespace) + "/" + shown(o.Name)
}

// shown is a name from content as a report line may hold it: as it is when every
// character is visible, Go-quoted otherwise, so that a name holding a newline or a
// terminal escape cannot write lines of its own into the report.
func shown(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || r == utf8.RuneError }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// Where is the object's source: "apps/web.yaml" or "apps/web.yaml document 2".
func (o Object) Where() string {
	if o.Document > 1 {
		return shown(o.Source) + " document " + strconv.Itoa(o.Document)
	}
	return shown(o.Source)
}

// Title is the kept object's human name.
func (k Kept) Title() string {
	return Object{ID: k.ID}.Title()
}

// warned reports whether the object carries a warning with reason.
func (o Object) warned(r reason.Reason) bool {
	return slices.ContainsFunc(o.Warnings, func(w Message) bool { return w.Reason == r })
}

// Shown is s as a report line may hold it (shown): as it is when every character
// is visible, Go-quoted otherwise.
func Shown(s string) string { return shown(s) }
