package dryrun

import (
	"context"
	"slices"

	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// createdWhenMissing reports whether the applier creates the object only when it is
// missing and never updates it: the Namespace of Argo CD's CreateNamespace=true or a
// HelmRelease's install.createNamespace.
func createdWhenMissing(o render.Object) bool {
	return slices.ContainsFunc(o.Notes, func(n render.Note) bool { return n.Reason == reason.NamespaceCreated })
}

// previewCreatedWhenMissing previews an object the applier only creates: untouched
// when it exists, else created as the applier sends it.
func previewCreatedWhenMissing(ctx context.Context, c *kube.Clients, res dynamic.ResourceInterface, r *Result, opts Options) bool {
	live, err := read(ctx, c, res, r, 1, opts)
	if err != nil {
		r.Err = requestError(c, "get", r, err)
		return true
	}
	if live == nil || opts.Absent[r.ID.Key()] {
		return false
	}
	untouched(r, live, "it creates the namespace only when it is missing", opts)
	return true
}
