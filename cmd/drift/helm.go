package main

import (
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/render"
)

// readHelmReleases prepares the targets the helm applier upgrades: each reads its
// release's deployed revision (what the upgrade starts from and renders the next
// revision of), and its cluster is opened to the chart's lookup, read-only, as helm
// upgrade's lookup reads the cluster.
func (run *runState) readHelmReleases(cache *render.Cache) {
	n := 0
	for _, t := range run.all {
		if t.applier != "helm" || t.conn == nil || t.skipped != "" {
			continue
		}
		if t.conn.lookupKey == "" {
			n++
			t.conn.lookupKey = fmt.Sprintf("cluster-%d", n)
			cache.AllowLookup(t.conn.lookupKey, t.conn.clients.Config)
		}
		cs, err := kubernetes.NewForConfig(t.conn.clients.Config)
		if err == nil {
			owner := t.owner(t.conn)
			t.helm, err = dryrun.ReadHelmRelease(cs, t.conn.clients.Mapper, owner.Namespace, owner.Name)
		}
		if err != nil {
			t.renderErr = err
			t.conn = nil // not rendered nor previewed: the report says why
		}
	}
}
