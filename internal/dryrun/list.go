package dryrun

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/kube"
)

// planLists groups the results to send by resource and namespace, hands each group
// large enough a LIST (Result.list, kube.Lists), and starts reading the lists in the
// order their objects come, a window of objects ahead. It returns the order to send
// results in: each group's objects together, where its first object was, so that the
// objects holding the window's room are always the next to be sent.
func planLists(ctx context.Context, c *kube.Clients, results []Result, skip func(int) bool, opts Options) []int {
	order := make([]int, 0, len(results))
	lists := c.NewLists()
	if lists == nil {
		for i := range results {
			order = append(order, i)
		}
		return order
	}
	type group struct {
		key     kube.ListKey
		members []int
	}
	byKey := map[kube.ListKey]*group{}
	groupOf := make([]*group, len(results))
	for i := range results {
		r := &results[i]
		if r.Err != nil || r.pendingCRD != nil || r.Object.Obj.GetName() == "" || (skip != nil && skip(i)) {
			continue
		}
		mapping, err := c.Mapper.RESTMapping(r.ID.GroupKind(), r.ID.Version)
		if err != nil {
			continue
		}
		k := kube.ListKey{GVR: mapping.Resource}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			k.Namespace = r.ID.Namespace
		}
		g := byKey[k]
		if g == nil {
			g = &group{key: k}
			byKey[k] = g
		}
		groupOf[i] = g
		g.members = append(g.members, i)
	}
	placed := map[*group]bool{}
	for i := range results {
		g := groupOf[i]
		if g == nil {
			order = append(order, i)
			continue
		}
		if placed[g] {
			continue
		}
		placed[g] = true
		order = append(order, g.members...)
		if l := lists.Add(g.key, len(g.members)); l != nil {
			for _, j := range g.members {
				results[j].list = l
			}
		}
	}
	lists.Start(ctx, opts.RequestTimeout, opts.Warnf)
	return order
}

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
