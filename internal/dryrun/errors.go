package dryrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/drift-gitops/drift/internal/object"
)

func mappingError(id object.ID, err error) *Message {
	if meta.IsNoMatchError(err) {
		gv := id.Version
		if id.Group != "" {
			gv = id.Group + "/" + id.Version
		}
		return &Message{Reason: ReasonUnknownKind, Message: fmt.Sprintf("the cluster does not serve kind %s in %s: install its CustomResourceDefinition or fix apiVersion", id.Kind, gv)}
	}
	return &Message{Reason: ReasonUnavailable, Message: fmt.Sprintf("failed to look up kind %s in the cluster's API discovery: %v", id.Kind, err)}
}

// requestError turns a failed request into a message that keeps the server's own
// words and says what to do.
func requestError(c *Clients, verb string, r *Result, err error) *Message {
	what := map[string]string{"get": "reading the live object", "apply": "applying"}[verb]
	if what == "" {
		what = "dry-run apply"
	}
	server := err.Error()
	switch {
	case apierrors.IsForbidden(err):
		who := ""
		if c.User != "" {
			who = " as " + c.User
		}
		return &Message{Reason: ReasonForbidden, Message: fmt.Sprintf("%s failed%s: %s. drift needs get, and patch with dry-run, on this resource", what, who, server)}
	case apierrors.IsInvalid(err) && len(immutableFields(err)) > 0:
		return &Message{Reason: ReasonImmutable, Message: fmt.Sprintf(
			"%s cannot change on an existing object (field is immutable): applying this change will fail. The object must be replaced: delete and recreate it (kubectl replace --force), or give it a new name. The server said: %s",
			strings.Join(immutableFields(err), ", "), server)}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &Message{Reason: ReasonInvalid, Message: fmt.Sprintf("the API server rejects this object: %s", server)}
	case apierrors.IsNotFound(err):
		return &Message{Reason: ReasonNotFound, Message: fmt.Sprintf("%s failed: %s", what, server)}
	case apierrors.IsConflict(err):
		return &Message{Reason: ReasonConflict, Message: fmt.Sprintf("%s failed: %s", what, server)}
	case isTimeout(err):
		return &Message{Reason: ReasonTimeout, Message: fmt.Sprintf("%s timed out: %s; raise --request-timeout or check the API server's load", what, server)}
	case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsTooManyRequests(err), isConnection(err):
		return &Message{Reason: ReasonUnavailable, Message: fmt.Sprintf("%s failed: the API server at %s is unavailable: %s", what, c.Host, server)}
	}
	return &Message{Reason: ReasonError, Message: fmt.Sprintf("%s failed: %s", what, server)}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isConnection(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "EOF")
}

// immutableFields lists the fields an Invalid answer calls immutable.
func immutableFields(err error) []string {
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return nil
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		if strings.Contains(c.Message, "field is immutable") {
			out = append(out, c.Field)
		}
	}
	return out
}
