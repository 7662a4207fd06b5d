package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/policy"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/shard"
)

// Merge combines the JSON reports of a run's shards into the run's report, after
// planning the run again to check them, and returns it (Publish writes and
// publishes it once): drift report merge. o are the flags the shards ran with.
func (c *Config) Merge(ctx context.Context, o *Diff, files []string) (*report.Report, error) {
	o.cfg = c
	o.scrub = o.newScrubber()
	defer o.closeCache()
	o.Base = o.siteBase(o.gitlabBase(o.Base))
	rep, err := o.merge(ctx, files)
	if err != nil {
		return nil, scrubbedError{err: err, scrub: o.scrub}
	}
	return rep, nil
}

// merge reads the shards' reports, plans the run again to check them, and merges
// them, judged by the policy as a run is.
func (o *Diff) merge(ctx context.Context, files []string) (*report.Report, error) {
	if !slices.Contains(write.Formats, o.Output) {
		return nil, fmt.Errorf("unknown output format %q: use -o %s", o.Output, strings.Join(write.Formats, ", -o "))
	}
	if err := o.Report.validate(); err != nil {
		return nil, err
	}
	if err := o.preflight(); err != nil {
		return nil, err
	}
	shards := map[string]*report.Report{}
	var first *report.Report
	for _, name := range files {
		if _, dup := shards[name]; dup {
			return nil, fmt.Errorf("%s is given twice", name)
		}
		rep, err := readReport(o.cfg.Files, name)
		if err != nil {
			return nil, err
		}
		shards[name] = rep
		if first == nil {
			first = rep
		}
	}
	rep, err := shard.Merge(shards)
	if err != nil {
		return nil, err
	}
	if err := o.checkShards(ctx, first, shards); err != nil {
		return nil, err
	}
	// Each shard hid the values it knew; the merge knows every Secret the repository
	// renders (checkShards rendered them all), which a shard by cluster did not.
	entry.Scrub(o.scrub, rep)
	// Each shard judged itself by drift.yaml's failOn: the whole run is judged by it too.
	var failOn []string
	for _, s := range shards {
		if s.Policy != nil {
			failOn = append(failOn, s.Policy.FailOn...)
		}
	}
	if err := policy.Apply(rep, o.Report.policy(failOn, o.GitHub.FailOnDeletes)); err != nil {
		return nil, err
	}
	return rep, nil
}

// checkShards plans and renders the run again, as the shards did but without a
// cluster, and refuses shards that do not match it (shard.Check).
func (o *Diff) checkShards(ctx context.Context, first *report.Report, shards map[string]*report.Report) error {
	o.conns.bind(ctx)
	pl, done, err := o.openPlan(ctx, mode{base: o.Base, drift: first.Kind == report.KindDrift, configFrom: o.ConfigFrom, cluster: o.Cluster}, false)
	defer done()
	if err != nil {
		return fmt.Errorf("planning the run again to check its shards: %w", err)
	}
	var baseCommit string
	if pl.Base != nil {
		baseCommit = pl.Base.Commit
	}
	if pl.Head.Commit != first.Commit || baseCommit != first.BaseCommit {
		return fmt.Errorf("the shards preview commit %s against base %s; this merge plans %s against %s: run drift report merge with the --ref and --base the shards ran with",
			shortCommit(first.Commit), shortCommit(first.BaseCommit), shortCommit(pl.Head.Commit), shortCommit(baseCommit))
	}
	for _, t := range pl.Targets {
		o.scrub.AddPublic(t.Name)
	}
	planned := preview.Planned(pl.Cache, pl.Targets, pl.Head, func(obj render.Object) {
		o.scrub.AddPublic(obj.Get().GetName(), obj.Get().GetNamespace())
		if !o.ShowSecrets {
			o.scrub.AddSecrets(obj.Get())
		}
	})
	return shard.Check(shards, planned)
}

// shortCommit is a commit's first 12 digits, or "none".
func shortCommit(c string) string {
	if c == "" {
		return "none"
	}
	return c[:min(12, len(c))]
}

// readReport reads one JSON report from fsys.
func readReport(fsys files.FS, name string) (*report.Report, error) {
	f, err := files.Or(fsys).Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := report.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rep, nil
}
