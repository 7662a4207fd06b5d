package dryrun

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/dryrun/crd"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// preview fills r.Live and r.Merged (or r.Err) for one planned object.
func preview(ctx context.Context, c *kube.Clients, r *Result, opts Options) {
	ctx, sink := kube.WithWarnings(ctx)
	defer func() {
		for _, w := range sink.Messages() {
			r.Warnings = append(r.Warnings, Message{Reason: reason.ServerWarning, Message: "the API server warns: " + w})
		}
	}()
	if a := opts.Applier.For(r.Object.Get()); a != nil {
		opts.Applier = a
		opts.FieldManager = a.Sending().ManagerFor(opts.FieldManager)
		opts.ForceConflicts = opts.ForceConflicts || a.Sending().Force
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
	if r.Object.Name() == "" {
		previewGenerated(ctx, c, res, r, opts)
		return
	}
	if createdWhenMissing(r.Object) && previewCreatedWhenMissing(ctx, c, res, r, opts) {
		return
	}
	previewApplied(ctx, c, res, r, opts)
}

// previewApplied sends the object as its applier sends it (Applier.Send), and reads
// it again and sends it again when it changed in between.
func previewApplied(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, opts Options) {
	s := &server{c: c, res: res, name: r.ID.Name, opts: opts}
	cache := cachedFor(c, s, r, opts)
	// An encrypted Secret's note (its warning in the report) says why it is opaque.
	_, opaque := encryptedNote(r.Object)
	unfilled := false
	if filled, ok := FilledNote(r.Object); ok {
		// flux-operator fills it from the cluster before applying it: so does the
		// preview, or, when the source cannot be read, it is taken as the cluster
		// holds it. Its note says which.
		obj := r.Object.Get().DeepCopy()
		msg := filled.Message + ": filled from the cluster as it fills it"
		if err := fillFromCluster(ctx, c, obj, opts); err != nil {
			opaque, unfilled = true, true
			msg = filled.Message + "; " + err.Error() + ": previewed as the cluster holds it"
		} else {
			r.Object = r.Object.With(obj)
		}
		r.Object = withNote(r.Object, reason.OperatorFilled, msg)
	}
	for attempt := 1; ; attempt++ {
		live, err := read(ctx, c, res, r, attempt, opts)
		if err != nil {
			r.Err = requestError(c, "get", r, err)
			return
		}
		if opaque && live != nil {
			// An encrypted Secret no key decrypts, or an object an operator fills from
			// what drift cannot read: its values are not known, so the prediction is
			// the live object (entry.Build reads a changed encrypted document as a
			// modification whose values are not shown).
			r.Live, r.Merged = live, live
			return
		}
		if unfilled {
			// An operator-filled object the cluster lacks: created as written,
			// filled then; not sent, whose values drift cannot know.
			r.Live, r.Merged = nil, asWritten(r)
			return
		}
		obj, skip, err := prepared(r, live, opts)
		if err != nil {
			r.Err = &Message{Reason: reason.Invalid, Message: err.Error()}
			return
		}
		if skip != "" {
			untouched(r, live, skip, opts)
			return
		}
		var through applier.Server = s
		if cache != nil {
			through = cache.through(obj, live)
		}
		sent, err := opts.Applier.Send(ctx, through, applier.Object{ID: r.ID, Obj: obj, Live: live, Owner: opts.Owner,
			Manager: opts.FieldManager, Force: opts.ForceConflicts, Notes: notes(r.Object)})
		for _, w := range sent.Warnings {
			r.Warnings = append(r.Warnings, Message(w))
		}
		var refused *applier.Refused
		var final *applier.Final
		switch {
		case errors.As(err, &refused):
			r.Err = &Message{Reason: refused.Reason, Message: refused.Message}
			return
		case errors.As(err, &final):
			r.Err = requestError(c, "patch", r, final.Err)
			return
		case err == nil && sent.Untouched != "":
			untouched(r, live, sent.Untouched, opts)
			return
		}
		if !settle(c, r, live, sent.Merged, err, attempt, opts) {
			return
		}
	}
}

// encryptedNote is o's note that it is an encrypted Secret no key decrypts
// (reason.Encrypted), if it has one.
func encryptedNote(o render.Object) (render.Note, bool) {
	for _, n := range o.Notes {
		if n.Reason == reason.Encrypted {
			return n, true
		}
	}
	return render.Note{}, false
}

// EncryptedChange reports whether o is an encrypted Secret no key decrypts whose
// encrypted document the change alters: a modification whose values are not known.
func EncryptedChange(o render.Object) bool {
	n, ok := encryptedNote(o)
	return ok && n.Changed
}

// notes are the reasons of what rendering noted about o.
func notes(o render.Object) []reason.Reason {
	out := make([]reason.Reason, 0, len(o.Notes))
	for _, n := range o.Notes {
		out = append(out, n.Reason)
	}
	return out
}

// server is what an applier sends one object through: dry-run requests for the
// object's resource, as the run's field manager, each bounded by the request timeout
// and retried by kube.Retry.
type server struct {
	c    *kube.Clients
	res  dynamic.ResourceInterface
	name string
	opts Options
}

func (s *server) Apply(ctx context.Context, body []byte, force bool) (*unstructured.Unstructured, error) {
	return s.retried(ctx, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return s.res.Patch(ctx, s.name, types.ApplyPatchType, body, metav1.PatchOptions{
			DryRun: []string{metav1.DryRunAll}, FieldManager: s.opts.FieldManager, Force: &force,
			FieldValidation: s.opts.Applier.Sending().Validation()})
	})
}

func (s *server) Create(ctx context.Context, obj *unstructured.Unstructured, validation string) (*unstructured.Unstructured, error) {
	return s.retried(ctx, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return s.res.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: s.opts.FieldManager, FieldValidation: validation})
	})
}

func (s *server) Patch(ctx context.Context, pt types.PatchType, patch []byte, validation string) (*unstructured.Unstructured, error) {
	return s.retried(ctx, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return s.res.Patch(ctx, s.name, pt, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: s.opts.FieldManager, FieldValidation: validation})
	})
}

func (s *server) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return s.retried(ctx, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return s.res.Update(ctx, obj, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: s.opts.FieldManager})
	})
}

// retried sends one request within the request timeout, by drift's retry policy.
func (s *server) retried(ctx context.Context, send func(context.Context) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	return kube.Retry(ctx, s.c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		defer cancel()
		return send(ctx)
	})
}

// settle records the outcome of one dry run of r, whichever way its applier sent it,
// and reports whether to read the object and try again: the live object changed in
// between, which is retried up to maxVersionRetries times.
func settle(c *kube.Clients, r *Result, live, merged *unstructured.Unstructured, err error, attempt int, opts Options) (again bool) {
	// A server-side apply carries no resourceVersion (the server would copy it into an
	// existing last-applied annotation, an artefact of drift in the prediction), so a
	// change between the read and the dry run shows as a dry-run answer whose
	// resourceVersion is not the one read: dry-run answers keep the stored version. A
	// client-side patch is pinned to the version read, as kubectl pins it, and fails
	// with a 409 instead.
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
	if merged != nil {
		opts.Applier.After(merged, live, opts.Owner)
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

// prepared is the object as its applier sends it: the rendered object with its
// defaulted namespace and what the applier adds. skip says why the applier sends
// nothing for it.
func prepared(r *Result, live *unstructured.Unstructured, opts Options) (obj *unstructured.Unstructured, skip string, err error) {
	obj = asWritten(r)
	owner := opts.Owner
	if owner.Destination == "" {
		owner.Destination = opts.Namespace
	}
	skip, err = opts.Applier.Prepare(obj, live, owner)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", r.ID.Display(), err)
	}
	return obj, skip, nil
}

// untouched records an object the applier sends nothing for: the cluster keeps what
// it has, so the prediction is the live object (nothing, when it is absent).
func untouched(r *Result, live *unstructured.Unstructured, why string, opts Options) {
	if opts.Absent[r.ID.Key()] {
		live = nil
	}
	r.Live, r.Merged = live, live
	if live == nil {
		r.Merged = nil
	}
	r.Warnings = append(r.Warnings, Message{Reason: reason.NotApplied, Message: fmt.Sprintf("%s sends nothing for this object: %s", opts.Applier.Name(), why)})
}

// previewPendingCR reports a custom resource whose CRD the change creates: an addition
// shown as written, or an error if it does not match the rendered CRD's schema.
func previewPendingCR(r *Result) {
	obj := asWritten(r)
	if problems := crd.Check(obj.Object, r.pendingCRD, r.pendingVer); len(problems) > 0 {
		r.Err = pendingCRError(r.pendingCRD, problems)
		return
	}
	checked := r.pendingVer != nil && r.pendingVer.Usable() == nil
	r.Live, r.Merged = nil, obj
	r.Warnings = append(r.Warnings, pendingCRWarning(r.ID.GroupKind().String(), r.pendingCRD, checked))
}

// asWritten is the rendered object with its defaulted namespace: what is shown when
// the server cannot answer for it.
func asWritten(r *Result) *unstructured.Unstructured {
	obj := r.Object.Get().DeepCopy()
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
		untouched(r, nil, skip, opts)
		return
	}
	merged, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
		defer cancel()
		return res.Create(ctx, obj, metav1.CreateOptions{
			DryRun: []string{metav1.DryRunAll}, FieldManager: opts.FieldManager, FieldValidation: opts.Applier.Sending().Validation()})
	})
	if err != nil {
		r.Err = requestError(c, "create", r, err)
		return
	}
	// The generated name differs on every run; where the server copied it (a Job's
	// job-name labels), it shows as the prefix and "(generated)".
	generated := merged.GetName()
	merged.Object = replaceString(merged.Object, generated, r.Object.Get().GetGenerateName()+"(generated)").(map[string]any)
	merged.SetName("")
	r.Live, r.Merged = nil, merged
	r.Warnings = append(r.Warnings, Message{Reason: reason.GenerateName, Message: fmt.Sprintf(
		"has only metadata.generateName (%q): it cannot be applied by name, so every apply creates another one; it is shown as an addition on every run", r.Object.Get().GetGenerateName())})
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
