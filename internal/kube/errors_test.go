package kube

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestAConversionWebhookFailureIsNotTheObjects: the same words with a CRD's
// conversion webhook failing are the webhook's state, retried as before.
func TestAConversionWebhookFailureIsNotTheObjects(t *testing.T) {
	t.Parallel()
	internal := func(msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
	}
	webhook := internal("failed to convert new object (shop/w; example.com/v2, Kind=Widget) to proper version: conversion webhook for example.com/v1, Kind=Widget failed: Post \"https://conv.shop.svc:443/convert\": connection refused")
	if unconvertible(webhook) || !transient(webhook) {
		t.Errorf("a conversion webhook's failure: unconvertible %v, transient %v", unconvertible(webhook), transient(webhook))
	}
	object := internal("failed to convert new object (default/s; /v1, Kind=Secret) to proper version: unable to convert unstructured object to /v1, Kind=Secret: error decoding from json: illegal base64 data at input byte 3")
	if !unconvertible(object) || transient(object) {
		t.Errorf("an object's value: unconvertible %v, transient %v", unconvertible(object), transient(object))
	}
	if other := internal("etcdserver: request timed out"); unconvertible(other) || !transient(other) {
		t.Errorf("another 500: unconvertible %v, transient %v", unconvertible(other), transient(other))
	}
}
