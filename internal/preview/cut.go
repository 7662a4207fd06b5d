package preview

import (
	"context"
	"errors"
	"fmt"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/plan"
)

// cutShort marks the targets the run's end (ctx: --timeout, a signal) left
// unfinished, each with what it was waiting for: its cluster, its render, or its
// objects' turn. Targets that were skipped, refused, failed or previewed (their
// objects the deadline cut off are each not-checked, internal/dryrun) are left as
// they are.
func (p *Preview) cutShort(ctx context.Context, clusters Clusters) {
	for _, t := range p.Targets {
		if t.Skipped != "" || t.Refused != "" || t.connErr != nil || t.renderErr != nil || t.cut != "" {
			continue
		}
		switch {
		case t.conn == nil:
			t.cut = notPreviewed(ctx, clusters.opening())
		case t.Rendered == nil:
			t.cut = notPreviewed(ctx, "while rendering it")
		case len(t.Results) < len(t.Rendered.Objects):
			t.cut = notPreviewed(ctx, "before its objects' turn")
		}
	}
}

// notPreviewed says that the run's end left a target not previewed, and when.
func notPreviewed(ctx context.Context, when string) string {
	return "not previewed: the run ended " + when + " (" + endedBy(ctx) + ")"
}

// endedBy is what ended the run, with what to do about a deadline.
func endedBy(ctx context.Context) string {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Sprintf("%v; raise --timeout", cause)
	}
	return cause.Error()
}

// NotRun is the report's part of planned targets the run ended before previewing
// (a deadline or a signal while discovering or planning them, said by while): each
// one not skipped is an error, not-checked. Of a sharded run, each target is
// reported by the shard that owns it.
func NotRun(ctx context.Context, targets []plan.Target, shard plan.Shard, while string) []entry.TargetInput {
	clusters := plan.Clusters(targets)
	out := make([]entry.TargetInput, 0, len(targets))
	for i, pt := range targets {
		t := newTarget(pt)
		t.shard, t.ownsTarget = shard, shard.Owns(i)
		if shard.ByCluster {
			t.ownsTarget = shard.Owns(clusters[pt.Cluster])
		}
		if t.Skipped == "" && t.Refused == "" {
			t.cut = notPreviewed(ctx, while)
		}
		out = append(out, t.input())
	}
	return out
}
