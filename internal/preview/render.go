package preview

import (
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/dryrun"
)

// readHelmReleases prepares the targets the helm applier upgrades: each reads its
// release's deployed revision (what the upgrade starts from and renders the next
// revision of), and its cluster is opened to the chart's lookup, read-only, as helm
// upgrade's lookup reads the cluster.
func (r *runner) readHelmReleases(p *Preview) {
	n := 0
	for _, t := range p.Targets {
		if t.Applier != "helm" || t.conn == nil || t.Skipped != "" {
			continue
		}
		if t.conn.lookupKey == "" {
			n++
			t.conn.lookupKey = fmt.Sprintf("cluster-%d", n)
			r.deps.Cache.AllowLookup(t.conn.lookupKey, t.conn.Clients.Config)
		}
		cs, err := kubernetes.NewForConfig(t.conn.Clients.Config)
		if err == nil {
			owner := t.owner(t.conn)
			t.helm, err = dryrun.ReadHelmRelease(cs, t.conn.Clients.Mapper, owner.Namespace, owner.Name)
		}
		if err != nil {
			t.renderErr = err
			t.conn = nil // not rendered nor previewed: the report says why
		}
	}
}

// renderAll renders every target to preview, in parallel and through the cache.
func (r *runner) renderAll(p *Preview) {
	g := &errgroup.Group{}
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, t := range p.Targets {
		if t.Skipped != "" || t.conn == nil {
			continue
		}
		g.Go(func() error {
			if err := r.head.CheckPaths([]string{t.Spec.Path}); err != nil {
				t.renderErr = err
				return nil
			}
			t.Rendered, t.renderErr = r.deps.Cache.RenderSnapshot(r.head, t.renderSpec(t.conn))
			return nil
		})
	}
	_ = g.Wait()
}
