package dryrun

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/kube"
)

// read returns the live object for an attempt at previewing r: on the first, the copy
// a LIST read if there is one, else a GET (from the watch cache on the first attempt).
func read(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, attempt int, opts Options) (*unstructured.Unstructured, error) {
	if l := r.list; attempt == 1 && l != nil {
		r.list = nil // used once: a second attempt reads again
		if err := l.Wait(ctx); err != nil {
			l.Take(r.ID.Name)
			return nil, err
		}
		if obj, ok := l.Take(r.ID.Name); ok {
			return obj, nil
		}
	}
	return kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return kube.Get(ctx, res, r.ID.Name, attempt == 1, opts.RequestTimeout)
	})
}
