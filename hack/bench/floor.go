package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// floorWorkers is how many requests the floor client has in flight, as kubectl diff
// --concurrency=32.
const floorWorkers = 32

// floor is the least any preview of the head commit must do, with a bare client-go
// dynamic client and nothing else (no retries, no diff, no report): per object, read
// the live object and send a dry-run server-side apply (getAndApply), or send the
// apply alone. It runs as its own process, so that its CPU time and memory are
// measured as drift's are.
func floor(getAndApply bool, kubeconfig, repoDir, ref string) error {
	repo, err := source.Open(repoDir)
	if err != nil {
		return err
	}
	snap, err := repo.Snapshot(ref)
	if err != nil {
		return err
	}
	res, err := render.Plain(snap.FS, render.Options{})
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	ctx := context.Background()
	jobs := make(chan render.Object)
	var failed atomic.Int32
	var first atomic.Value
	var wg sync.WaitGroup
	for range floorWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range jobs {
				if err := floorOne(ctx, dyn, mapper, o, getAndApply); err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	for _, o := range res.Objects {
		jobs <- o
	}
	close(jobs)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d of %d objects failed, first: %v", n, len(res.Objects), first.Load())
	}
	return nil
}

func floorOne(ctx context.Context, dyn dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, o render.Object, get bool) error {
	gvk := o.Get().GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	res := dyn.Resource(m.Resource).Namespace(o.Get().GetNamespace())
	if get {
		if _, err := res.Get(ctx, o.Get().GetName(), metav1.GetOptions{}); err != nil && !isNotFound(err) {
			return err
		}
	}
	body, err := json.Marshal(o.Get().Object)
	if err != nil {
		return err
	}
	force := true
	_, err = res.Patch(ctx, o.Get().GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: "kubectl", Force: &force})
	return err
}
