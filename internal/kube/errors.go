package kube

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
)

// Problem is what a failed request means: a reason and a message that keeps the
// server's own words (without the values it quotes) and says what to do.
type Problem struct {
	Reason  reason.Reason
	Message string
}

// MappingProblem explains why an object's kind could not be mapped to a resource.
func MappingProblem(id object.ID, err error) Problem {
	if meta.IsNoMatchError(err) {
		gv := id.Version
		if id.Group != "" {
			gv = id.Group + "/" + id.Version
		}
		return Problem{Reason: reason.UnknownKind, Message: fmt.Sprintf("the cluster does not serve kind %s in %s: install its CustomResourceDefinition or fix apiVersion", id.Kind, gv)}
	}
	return Problem{Reason: reason.Unavailable, Message: fmt.Sprintf("failed to look up kind %s in the cluster's API discovery: %v", id.Kind, err)}
}

// Describe explains a failed request about the object id names (verb get, patch,
// apply, create or delete): the reason read from the server's status code, reason
// and causes, and what to do.
func Describe(c *Clients, verb string, id object.ID, err error) Problem {
	what := map[string]string{"get": "reading the live object", "apply": "applying", "delete": "dry-run delete", "create": "dry-run create"}[verb]
	if what == "" {
		what = "dry-run apply"
	}
	server := WithoutValues(err.Error())
	if p := webhookError(server); p != nil {
		return *p
	}
	switch {
	case apierrors.IsForbidden(err):
		return refused(c, verb, id, err, server)
	case apierrors.IsInvalid(err) && len(immutableFields(err)) > 0:
		return Problem{Reason: reason.Immutable, Message: fmt.Sprintf(
			"%s cannot change on an existing object: applying this change will fail. The object must be replaced: delete and recreate it (kubectl replace --force), or give it a new name. The server said: %s",
			strings.Join(immutableFields(err), ", "), server)}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return Problem{Reason: reason.Invalid, Message: fmt.Sprintf("the API server rejects this object: %s", server)}
	case untypable(err):
		return Problem{Reason: reason.Invalid, Message: untypableMessage(server)}
	case unconvertible(err):
		return Problem{Reason: reason.Invalid, Message: unconvertibleMessage(server)}
	case apierrors.IsNotFound(err):
		return Problem{Reason: reason.NotFound, Message: fmt.Sprintf("%s failed: %s", what, server)}
	case apierrors.IsConflict(err):
		return Problem{Reason: reason.Conflict, Message: fmt.Sprintf("%s failed: %s", what, server)}
	case isTimeout(err):
		return Problem{Reason: reason.Timeout, Message: fmt.Sprintf("%s timed out: %s; raise --request-timeout or check the API server's load", what, server)}
	case transient(err):
		return Problem{Reason: reason.Unavailable, Message: fmt.Sprintf("%s failed: the API server at %s is unavailable: %s", what, c.Host, server)}
	}
	return Problem{Reason: reason.Error, Message: fmt.Sprintf("%s failed: %s", what, server)}
}

// untypableMessages are the 500 answers of server-side apply when the object does not
// fit its schema: a field it does not declare, or a value of the wrong type. They are
// the object's fault, not the server's: every apply of it gets the same answer.
var untypableMessages = []string{"failed to create typed patch object", "failed to create typed live object"}

// untypable reports a 500 answer that is one of untypableMessages.
func untypable(err error) bool {
	if !apierrors.IsInternalError(err) {
		return false
	}
	msg := apiStatus(err).Message
	for _, m := range untypableMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

func untypableMessage(server string) string {
	what := "a field has the wrong type (quote a value that must be a string, such as a number or boolean in a Secret's stringData)"
	if strings.Contains(server, "field not declared in schema") {
		what = "it has a field its schema does not declare (a misspelt field, a field at the wrong level, or one of a newer API version)"
	}
	return fmt.Sprintf("the API server cannot read this object: %s. The server said: %s", what, server)
}

// unconvertibleMessages are the 500 answers of server-side apply when the applied
// object cannot be converted to its Go type (k8s.io/apimachinery's managedfields,
// structuredmerge.go): a byte field that is not base64, a time or quantity that
// does not parse. The answer has no reason and no causes, only these words. Like
// untypableMessages they are the object's fault: every apply of it gets the same
// answer.
var unconvertibleMessages = []string{"failed to convert new object", "failed to convert new typed object", "failed to convert to unversioned"}

// unconvertible reports a 500 answer that is one of unconvertibleMessages, unless a
// CRD's conversion webhook failed: that is the webhook's state, not the object's.
func unconvertible(err error) bool {
	s := apiStatus(err)
	if s.Code != http.StatusInternalServerError || strings.Contains(s.Message, "conversion webhook for") {
		return false
	}
	for _, m := range unconvertibleMessages {
		if strings.Contains(s.Message, m) {
			return true
		}
	}
	return false
}

func unconvertibleMessage(server string) string {
	what := "a value does not convert to its field's type"
	if strings.Contains(server, "illegal base64 data") {
		what = "a field that holds bytes (a Secret's data, a ConfigMap's binaryData, a caBundle) is not valid base64 (standard encoding, padded with =)"
	}
	return fmt.Sprintf("the API server cannot convert this object to its type: %s, so applying it will fail. The server said: %s", what, server)
}

// apiStatus is the Status the server answered with (empty when err is not one).
func apiStatus(err error) metav1.Status {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status()
	}
	return metav1.Status{}
}

// causes are the causes the server gave for its answer.
func causes(err error) []metav1.StatusCause {
	if d := apiStatus(err).Details; d != nil {
		return d.Causes
	}
	return nil
}

// refused explains a 403: the authorizer (RBAC) refusing the credentials, the
// namespace being deleted, or an admission plugin refusing the object.
func refused(c *Clients, verb string, id object.ID, err error, server string) Problem {
	for _, cause := range causes(err) {
		if cause.Type == corev1.NamespaceTerminatingCause {
			ns := id.Namespace
			return Problem{Reason: reason.NamespaceTerminating, Message: fmt.Sprintf(
				"namespace %s is being deleted, so the API server refuses new objects in it and applying this change will fail until it is gone: wait for the deletion to finish (kubectl get namespace %s shows what holds it: finalizers, or objects whose finalizers are pending), then apply. The server said: %s", ns, ns, server)}
		}
	}
	if rbacDenied.MatchString(server) {
		return forbidden(c, verb, id, err)
	}
	return Problem{Reason: reason.AdmissionDenied, Message: fmt.Sprintf(
		"the API server's admission refuses this object, so the real apply will be refused the same way: create what it names first (a ServiceAccount, a LimitRange's or ResourceQuota's room) or change the object. The server said: %s", server)}
}

// immutableFields lists the fields an Invalid answer says cannot change, in the API
// server's words for it: "field is immutable" (most fields), "may not change once
// set" (a Service's clusterIP), "updates to statefulset spec for fields other than
// ... are forbidden".
func immutableFields(err error) []string {
	var out []string
	for _, c := range causes(err) {
		if strings.Contains(c.Message, "field is immutable") || strings.Contains(c.Message, "may not change once set") ||
			strings.Contains(c.Message, "updates to statefulset spec for fields other than") {
			out = append(out, c.Field)
		}
	}
	return out
}

// rbacDenied parses the authorizer's words: User "alice" cannot patch resource
// "deployments" in API group "apps" in the namespace "shop".
var rbacDenied = regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)")?`)

// forbidden names what was refused: the verb, the resource, the namespace and the user.
func forbidden(c *Clients, verb string, id object.ID, err error) Problem {
	user, resource, ns := c.User, "", id.Namespace
	if m := rbacDenied.FindStringSubmatch(err.Error()); m != nil {
		if user == "" {
			user = m[1]
		}
		verb, resource, ns = m[2], m[3], m[5]
		if m[4] != "" {
			resource += "." + m[4]
		}
	} else if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		d := status.Status().Details
		resource = d.Kind
		if d.Group != "" {
			resource += "." + d.Group
		}
	}
	if resource == "" {
		resource = strings.ToLower(id.Kind)
	}
	where := "cluster-wide"
	if ns != "" {
		where = "in namespace " + ns
	}
	who := "the credentials in use"
	if user != "" {
		who = "user " + user
	}
	return Problem{Reason: reason.Forbidden, Message: fmt.Sprintf(
		"%s may not %s %s %s. drift needs get and patch (patch is sent with dryRun=All and changes nothing) on every resource it previews: grant them with a Role or ClusterRole, or preview with other credentials. The server said: %s",
		who, verb, resource, where, err.Error())}
}

// What the API server says when an admission webhook is in the way.
var (
	webhookDryRun  = regexp.MustCompile(`admission webhook "([^"]+)" does not support dry run`)
	webhookDenied  = regexp.MustCompile(`admission webhook "([^"]+)" denied the request`)
	webhookCalling = regexp.MustCompile(`failed calling webhook "([^"]+)"`)
)

// webhookError explains an answer that comes from an admission webhook.
func webhookError(server string) *Problem {
	if m := webhookDryRun.FindStringSubmatch(server); m != nil {
		return &Problem{Reason: reason.DryRunUnsupported, Message: fmt.Sprintf(
			"admission webhook %s does not support dry run (it declares sideEffects Unknown or Some), so the server cannot preview this object: ask the webhook's owner to declare sideEffects: None or NoneOnDryRun. The server said: %s", m[1], server)}
	}
	if m := webhookDenied.FindStringSubmatch(server); m != nil {
		return &Problem{Reason: reason.WebhookDenied, Message: fmt.Sprintf(
			"admission webhook %s denies this object, so the real apply will be denied too: change the object or the policy. The server said: %s", m[1], server)}
	}
	if m := webhookCalling.FindStringSubmatch(server); m != nil {
		what := "could not be reached"
		if strings.Contains(server, "deadline exceeded") || strings.Contains(server, "Timeout exceeded") || strings.Contains(server, "i/o timeout") {
			what = "did not answer in time"
		}
		return &Problem{Reason: reason.WebhookUnavailable, Message: fmt.Sprintf(
			"admission webhook %s %s and its failurePolicy is Fail, so the server refused the dry run without judging the object: check the webhook's service and pods (a webhook being restarted, such as cert-manager's, does this) and run drift again. The server said: %s", m[1], what, server)}
	}
	return nil
}

// typedValue is how the server quotes the value of a field of the wrong type:
// ".stringData.pin: expected string, got &value.valueUnstructured{Value:98765432123}".
var typedValue = regexp.MustCompile(`(?m)&value\.valueUnstructured\{Value:(.*)\}$`)

// WithoutValues replaces the values the server quotes from a field of the wrong type
// with what they are ("a number"): a Secret's value must not reach the report, and
// the type is what the user needs to know.
func WithoutValues(server string) string {
	return typedValue.ReplaceAllStringFunc(server, func(m string) string {
		v := typedValue.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(v, `"`):
			return "a string"
		case strings.HasPrefix(v, "map["):
			return "a map"
		case strings.HasPrefix(v, "[]"):
			return "a list"
		case v == "true" || v == "false":
			return "a boolean"
		case v == "<nil>":
			return "null"
		}
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return "a number"
		}
		return "another value"
	})
}
