package preview

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/prune"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// dryRun previews every rendered target on its cluster, one target after another,
// with what the change creates on each cluster (namespaces, CRDs) known to all of
// that cluster's targets, then finds what pruning deletes.
func (r *runner) dryRun(ctx context.Context, p *Preview) {
	total, first := 0, 0
	for i, t := range p.Targets {
		t.shard, t.first, t.ownsTarget = r.opts.Shard, first, r.opts.Shard.Owns(i)
		if t.Rendered == nil {
			continue
		}
		for j := range t.Rendered.Objects {
			if t.owns(j) {
				total++
			}
		}
		first += len(t.Rendered.Objects)
	}
	var mu sync.Mutex
	offset := 0
	pending := map[*cluster]*dryrun.Pending{}
	for _, g := range p.groups {
		var objs []render.Object
		for _, t := range g.targets {
			if t.Rendered != nil {
				objs = append(objs, t.Rendered.Objects...)
			}
		}
		if g.cluster != nil {
			pending[g.cluster] = dryrun.PendingFrom(objs)
		}
	}
	for _, t := range p.Targets {
		if t.Rendered == nil {
			continue
		}
		base := offset
		opts := t.dryRunOptions(r.opts)
		if r.deps.Progress != nil {
			opts.Progress = func(done, _ int) {
				mu.Lock()
				defer mu.Unlock()
				r.deps.Progress(base+done, total)
			}
		}
		opts.Absent, opts.Pending = t.conn.absent, pending[t.conn]
		if r.opts.Shard.Sharded() {
			opts.Skip = func(i int) bool { return !t.owns(i) }
		}
		opts.Finished, opts.Warnf = t.Rules.Trim, r.deps.Warnf
		t.Results = dryrun.Run(ctx, t.conn.Clients, t.Rendered.Objects, opts)
		if t.helm != nil && len(t.Rendered.Failures) == 0 && ctx.Err() == nil && t.ownsTarget {
			t.helmDeletes = dryrun.HelmDeletes(ctx, t.conn.Clients, t.helm, t.Results, opts)
		}
		for i := range t.Rendered.Objects {
			if t.owns(i) {
				offset++
			}
		}
		if r.opts.Prune && ctx.Err() == nil && t.ownsTarget {
			pr := prune.Find(ctx, t.conn.Clients, t.Rendered, t.Results, prune.Options{
				Namespace: t.namespaceIn(t.conn), RequestTimeout: t.conn.RequestTimeout, ApplySet: t.ApplySet})
			t.Pruned = &pr
		}
	}
	warnSharedObjects(p)
}

// warnSharedObjects warns about an object that two targets deploy to the same
// cluster: whichever applies last wins, and each undoes the other.
func warnSharedObjects(p *Preview) {
	for _, g := range p.groups {
		owners := map[object.Key][]string{}
		for _, t := range g.targets {
			for _, r := range t.Results {
				if r.Err == nil || r.Err.Reason != reason.Duplicate {
					owners[r.ID.Key()] = append(owners[r.ID.Key()], t.Name)
				}
			}
		}
		for _, t := range g.targets {
			for i := range t.Results {
				r := &t.Results[i]
				names := owners[r.ID.Key()]
				if len(names) < 2 {
					continue
				}
				var others []string
				for _, n := range names {
					if n != t.Name {
						others = append(others, n)
					}
				}
				r.Warnings = append(r.Warnings, dryrun.Message{Reason: reason.Duplicate, Message: fmt.Sprintf(
					"target %s also deploys this object to the same cluster: whichever applies last wins; keep it in one target",
					strings.Join(others, ", "))})
			}
		}
	}
}
