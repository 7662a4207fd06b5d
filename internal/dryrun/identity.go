package dryrun

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// invalidIdentity checks r's identity against the rules the API server applies to
// every object (rule adds the kind's own name rule), before anything is sent or shown
// as an addition. Objects the server never sees (a custom resource whose CRD the
// change adds, an object in a namespace it adds) would otherwise reach the report,
// and kubectl diff's file names, with whatever identity the repository wrote.
func invalidIdentity(r *Result, rule *object.NameRule) *Message {
	err := object.Validate(r.ID, r.Object.Name() == "", rule)
	if err == nil {
		return nil
	}
	return identityError(err)
}

func identityError(err error) *Message {
	parts := []string{err.Error()}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts = parts[:0]
		for _, e := range joined.Unwrap() {
			parts = append(parts, e.Error())
		}
	}
	return &Message{Reason: reason.Invalid, Message: strings.Join(parts, "; ") +
		": the API server refuses this identity, so the object was not previewed; fix it in the file"}
}

// invalidDefaultNamespace checks the namespace an object takes because it names none.
func invalidDefaultNamespace(ns string) *Message {
	problems := validation.ValidateNamespaceName(ns, false)
	if len(problems) == 0 {
		return nil
	}
	return &Message{Reason: reason.Invalid, Message: fmt.Sprintf(
		"the object names no namespace and the target's namespace %q is not %s: %s; fix the target's namespace (-n or drift.yaml)",
		ns, object.DNSLabel.Desc, strings.Join(problems, "; "))}
}
