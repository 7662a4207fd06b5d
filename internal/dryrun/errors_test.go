package dryrun

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/reason"
)

// The API servers that answer "does not support dry run" (webhooks registered with
// sideEffects Unknown or Some, which admissionregistration/v1 no longer accepts) are
// older than the test server, so this answer is checked on its words.
func TestWebhookAnswersGetTheirOwnReason(t *testing.T) {
	for server, want := range map[string]reason.Reason{
		`admission webhook "audit.example.com" does not support dry run`:                                                reason.DryRunUnsupported,
		`admission webhook "policy.example.com" denied the request: images must come from registry.example`:             reason.WebhookDenied,
		`Internal error occurred: failed calling webhook "cert-manager.io": failed to call webhook: connection refused`: reason.WebhookUnavailable,
	} {
		m := webhookError(server)
		if m == nil || m.Reason != want || !strings.Contains(m.Message, server) {
			t.Errorf("%q: %+v, want reason %s quoting the server", server, m, want)
		}
	}
	if m := webhookError(`deployments.apps "web" is invalid`); m != nil {
		t.Errorf("not a webhook answer, got %+v", m)
	}
}
