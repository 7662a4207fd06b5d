package dryrun

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// preview fills r.Live and r.Merged (or r.Err) for one planned object.
func preview(ctx context.Context, c *kube.Clients, r *Result, opts Options) {
	ctx, sink := kube.WithWarnings(ctx)
	defer func() {
		for _, w := range sink.Messages() {
			r.Warnings = append(r.Warnings, Message{Reason: reason.ServerWarning, Message: "the API server warns: " + w})
		}
	}()
	if f := opts.Profile.ObjectProfile; f != nil {
		if p := f(r.Object.Obj); p != nil {
			opts.Profile = p
			opts.FieldManager = p.manager(opts)
			opts.ForceConflicts = opts.ForceConflicts || p.Force
		}
	}
	if previewChangedCR(ctx, c, r, opts) {
		return
	}
	if r.pendingCRD != nil {
		previewPendingCR(r)
		return
	}
	res, err := c.ResourceFor(r.ID)
	if err != nil {
		r.Err = mappingError(r.ID, err)
		return
	}
	if r.Object.Obj.GetName() == "" {
		previewGenerated(ctx, c, res, r, opts)
		return
	}
	if createdWhenMissing(r.Object) && previewCreatedWhenMissing(ctx, c, res, r, opts) {
		return
	}
	switch opts.Profile.Method {
	case ClientSide:
		previewClientSide(ctx, c, res, r, opts)
	case HelmUpgrade:
		previewHelm(ctx, c, res, r, opts)
	default:
		previewServerSide(ctx, c, res, r, opts)
	}
}

// previewServerSide sends the object as a server-side apply, as the profile's field
// manager; a conflict is reported and the apply forced, as --force-conflicts would.
func previewServerSide(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, opts Options) {
	force := opts.ForceConflicts
	for attempt := 1; ; attempt++ {
		live, err := read(ctx, c, res, r, attempt, opts)
		if err != nil {
			r.Err = requestError(c, "get", r, err)
			return
		}
		obj, skip, err := prepared(r, live, opts)
		if err != nil {
			r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
			return
		}
		if skip != "" {
			untouched(r, live, obj, skip, opts)
			return
		}
		body, err := patchBody(r, obj)
		if err != nil {
			r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
			return
		}
		applyOnce := func(ctx context.Context) (*unstructured.Unstructured, error) {
			return apply(ctx, res, r.ID.Name, body, force, opts)
		}
		csa := appliedClientSide(live, opts.FieldManager)
		if opts.Profile.MigrationNeeded != nil {
			csa = opts.Profile.MigrationNeeded(live)
		}
		merged, err := kube.Retry(ctx, c, applyOnce)
		if err != nil && !force && isFieldManagerConflict(err) {
			if !csa || !onlyCSAConflicts(err) {
				r.Warnings = append(r.Warnings, conflictWarning(err))
			}
			force = true
			merged, err = kube.Retry(ctx, c, applyOnce)
		}
		if err == nil && csa && opts.Profile.MigratesCSA {
			var removed []string
			lastApplied := ""
			if opts.FieldManager == DefaultFieldManager {
				lastApplied = opts.Profile.LastAppliedManager
			}
			if merged, removed, err = migrateCSA(ctx, res, merged, opts.FieldManager, lastApplied, opts); err == nil {
				r.Warnings = append(r.Warnings, migrationWarning(opts, removed))
			}
		}
		if err != nil && isFieldManagerConflict(err) {
			r.Err = requestError(c, "patch", r, err)
			return
		}
		if !settle(c, r, live, merged, err, attempt, opts) {
			return
		}
	}
}

// settle records the outcome of one dry run of r, in either apply mode, and reports
// whether to read the object and try again: the live object changed in between (409),
// which is retried up to maxVersionRetries times.
func settle(c *kube.Clients, r *Result, live, merged *unstructured.Unstructured, err error, attempt int, opts Options) (again bool) {
	// The applied body carries no resourceVersion (the server would copy it into an
	// existing last-applied annotation, an artefact of drift in the prediction), so a
	// change between the read and the dry run shows as a dry-run answer whose
	// resourceVersion is not the one read: dry-run answers keep the stored version.
	changed := err == nil && live != nil && merged != nil && merged.GetResourceVersion() != live.GetResourceVersion()
	if changed || (err != nil && apierrors.IsConflict(err) && live != nil) {
		if attempt < maxVersionRetries {
			return true
		}
		r.Err = &Message{Reason: reason.ChangedDuringDiff, Message: fmt.Sprintf("%s kept changing in the cluster while drift read it (%d tries): run drift again", r.ID.Display(), attempt)}
		return false
	}
	if ns, ok := missingNamespace(err); ok {
		namespaceMissing(r, ns, opts)
		return false
	}
	if err != nil {
		r.Err = requestError(c, "patch", r, err)
		return false
	}
	if opts.Profile.After != nil && merged != nil {
		opts.Profile.After(merged, live, opts.Owner)
	}
	if opts.Absent[r.ID.Key()] {
		live = nil
	}
	if w := mismatch(live, opts); w != nil {
		r.Warnings = append(r.Warnings, *w)
	}
	r.Live, r.Merged = live, merged
	return false
}

// prepared is the object as the profile's applier sends it: the rendered object with
// its defaulted namespace and what the applier adds. skip says why the applier sends
// nothing for it.
func prepared(r *Result, live *unstructured.Unstructured, opts Options) (obj *unstructured.Unstructured, skip string, err error) {
	obj = asWritten(r)
	if opts.Profile.Prepare == nil {
		return obj, "", nil
	}
	owner := opts.Owner
	if owner.Destination == "" {
		owner.Destination = opts.Namespace
	}
	skip, err = opts.Profile.Prepare(obj, live, owner)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", r.ID.Display(), err)
	}
	return obj, skip, nil
}

// untouched records an object the applier sends nothing for: the cluster keeps what
// it has, so the prediction is the live object (nothing, when it is absent).
func untouched(r *Result, live, obj *unstructured.Unstructured, why string, opts Options) {
	if opts.Absent[r.ID.Key()] {
		live = nil
	}
	r.Live, r.Merged = live, live
	if live == nil {
		r.Merged = nil
	}
	r.Warnings = append(r.Warnings, Message{Reason: reason.NotApplied, Message: fmt.Sprintf("%s sends nothing for this object: %s", opts.Profile.Name, why)})
}

func apply(ctx context.Context, res dynamic.ResourceInterface, name string, body []byte, force bool, opts Options) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
	defer cancel()
	return res.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun:       []string{metav1.DryRunAll},
		FieldManager: opts.FieldManager,
		Force:        &force,
		// As the applier validates (kubectl apply's default --validate=strict): a
		// misspelled field fails the real apply, so it fails the preview too.
		FieldValidation: opts.Profile.fieldValidation(),
	})
}

// patchBody is the rendered object with its defaulted namespace, as the applier sends
// it. It never pins the live resourceVersion: the API server copies the applied body
// into an existing last-applied-configuration annotation, so a pinned version would
// appear in the prediction though no real apply writes it. settle detects a change
// between the read and the dry run from the answer's resourceVersion instead.
func patchBody(r *Result, obj *unstructured.Unstructured) ([]byte, error) {
	obj = obj.DeepCopy()
	obj.SetResourceVersion("")
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("failed to encode %s: %w", r.ID.Display(), err)
	}
	return data, nil
}

func isFieldManagerConflict(err error) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsConflict(err) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}

// conflictWarning lists the fields other managers own, grouped by manager.
func conflictWarning(err error) Message {
	byManager := map[string][]string{}
	status := err.(apierrors.APIStatus).Status()
	for _, c := range status.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		mgr := strings.TrimPrefix(c.Message, "conflict with ")
		byManager[mgr] = append(byManager[mgr], c.Field)
	}
	managers := make([]string, 0, len(byManager))
	for m := range byManager {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	parts := make([]string, 0, len(managers))
	for _, m := range managers {
		fields := byManager[m]
		sort.Strings(fields)
		parts = append(parts, fmt.Sprintf("%s owned by %s", strings.Join(fields, ", "), m))
	}
	return Message{Reason: reason.Conflict, Message: "apply conflicts with other field managers: " + strings.Join(parts, "; ") +
		". A plain server-side apply will fail; the diff shows a forced apply (--force-conflicts), which takes these fields over"}
}

// previewPendingCR reports a custom resource whose CRD the change creates: an addition
// shown as written, or an error if it does not match the rendered CRD's schema.
func previewPendingCR(r *Result) {
	obj := asWritten(r)
	if problems := checkPendingCR(obj.Object, r.pendingCRD, r.pendingVer); len(problems) > 0 {
		r.Err = pendingCRError(r.pendingCRD, problems)
		return
	}
	checked := r.pendingVer != nil && r.pendingVer.validator != nil && r.pendingVer.structural != nil
	r.Live, r.Merged = nil, obj
	r.Warnings = append(r.Warnings, pendingCRWarning(r.ID.GroupKind().String(), r.pendingCRD, checked))
}

// asWritten is the rendered object with its defaulted namespace: what is shown when
// the server cannot answer for it.
func asWritten(r *Result) *unstructured.Unstructured {
	obj := r.Object.Obj.DeepCopy()
	if r.ID.Namespace != "" {
		obj.SetNamespace(r.ID.Namespace)
	}
	return obj
}

// missingNamespace reports a "namespace not found" answer and which namespace.
func missingNamespace(err error) (string, bool) {
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsNotFound(err) {
		return "", false
	}
	d := status.Status().Details
	if d == nil || d.Kind != "namespaces" {
		return "", false
	}
	return d.Name, true
}

// previewGenerated previews an object that has only metadata.generateName: it cannot
// be applied by name, so every apply creates a new one (kubectl create). The server
// dry-runs that creation; the generated name, different on every run, is left out.
func previewGenerated(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, opts Options) {
	obj, skip, err := prepared(r, nil, opts)
	if err != nil {
		r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
		return
	}
	if skip != "" {
		untouched(r, nil, obj, skip, opts)
		return
	}
	merged, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return res.Create(ctx, obj, metav1.CreateOptions{
			DryRun: []string{metav1.DryRunAll}, FieldManager: opts.FieldManager, FieldValidation: opts.Profile.fieldValidation()})
	})
	if err != nil {
		r.Err = requestError(c, "create", r, err)
		return
	}
	// The generated name differs on every run; where the server copied it (a Job's
	// job-name labels), it shows as the prefix and "(generated)".
	generated := merged.GetName()
	merged.Object = replaceString(merged.Object, generated, r.Object.Obj.GetGenerateName()+"(generated)").(map[string]any)
	merged.SetName("")
	r.Live, r.Merged = nil, merged
	r.Warnings = append(r.Warnings, Message{Reason: reason.GenerateName, Message: fmt.Sprintf(
		"has only metadata.generateName (%q): it cannot be applied by name, so every apply creates another one; it is shown as an addition on every run", r.Object.Obj.GetGenerateName())})
}

// namespaceMissing reports an object whose namespace does not exist: an addition
// shown as written when the change creates the namespace, else an error naming it.
func namespaceMissing(r *Result, ns string, opts Options) {
	if opts.Pending != nil && opts.Pending.Namespaces[ns] {
		// The server stopped at the missing namespace, before it checked the name.
		rule := object.NameRuleFor(r.ID.GroupKind())
		if r.Err = invalidIdentity(r, &rule); r.Err != nil {
			return
		}
		r.Live, r.Merged = nil, asWritten(r)
		r.Warnings = append(r.Warnings, Message{Reason: reason.NamespacePending, Message: fmt.Sprintf(
			"namespace %s is created by this change, so the server could not dry-run this object: it is shown as written, without server defaults or validation", ns)})
		return
	}
	r.Err = &Message{Reason: reason.NotFound, Message: fmt.Sprintf(
		"namespace %s does not exist in the cluster and this change does not create it: add the Namespace to the repository, or fix metadata.namespace", ns)}
}

// replaceString replaces every string value equal to old in a JSON-like value.
func replaceString(v any, old, new string) any {
	switch c := v.(type) {
	case string:
		if c == old {
			return new
		}
	case map[string]any:
		for k, x := range c {
			c[k] = replaceString(x, old, new)
		}
	case []any:
		for i, x := range c {
			c[i] = replaceString(x, old, new)
		}
	}
	return v
}
