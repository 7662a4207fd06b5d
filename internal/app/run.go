package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/policy"
	"github.com/drift-gitops/drift/internal/preview"
	"github.com/drift-gitops/drift/internal/render/rendercache"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/source"
)

// mode is what drift diff and drift detect run differently; the rest of a run is the
// same.
type mode struct {
	// base, cluster and configFrom are diff's --base, --cluster and --config-from.
	base, cluster, configFrom string
	// splitDrift tells the change apart from drift already in the cluster (diff's
	// --base without --no-split-drift).
	splitDrift bool
	// drift is detect's: --ref defaults to the default branch, and every difference
	// is reported as drift.
	drift bool
	// crdsFromContext is diff's --crds-from-context.
	crdsFromContext string
	// lookupSecrets is diff's --lookup-secrets: with --base, Helm's lookup hands
	// templates the data of the cluster's Secrets.
	lookupSecrets bool
	// loadAll is diff's --ephemeral-load-all (preview.Options.LoadAll).
	loadAll bool
}

// run renders and previews, and returns the report (Publish writes and publishes
// it), or the error that left no report.
func (o *Run) run(ctx context.Context, cfg *Config, m mode) (*report.Report, error) {
	o.cfg = cfg
	o.scrub = o.newScrubber()
	defer o.closeCache()
	rep, err := o.preview(ctx, m)
	if err != nil {
		return nil, scrubbedError{err: err, scrub: o.scrub}
	}
	return rep, nil
}

// preview is run before its errors are scrubbed.
func (o *Run) preview(ctx context.Context, m mode) (*report.Report, error) {
	if err := o.validate(m.configFrom); err != nil {
		return nil, err
	}
	if err := o.preflight(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, runTimeout(o.Timeout))
	defer cancel()
	o.conns.bind(ctx)

	pl, done, err := o.openPlan(ctx, m, true)
	defer done()
	if err != nil && (pl == nil || ctx.Err() == nil) {
		return nil, err
	}
	for _, v := range pl.Secrets {
		o.scrub.AddSecretData(v)
	}
	if err != nil {
		// The run ended while discovering or planning: what was found is reported,
		// nothing of it previewed.
		return o.cutShort(ctx, m, pl, err, "while its targets were discovered and planned")
	}
	popts := o.previewOptions(m)
	if popts.CRDs, err = o.ephemeralCRDs(ctx, m, pl); err != nil {
		if ctx.Err() != nil {
			return o.cutShort(ctx, m, pl, err, "while the clusters' CRDs were read")
		}
		return nil, err
	}
	progress := newProgress(o.cfg.ErrOut, "previewing")
	entries := o.newBuilder(m.cluster, pl)
	results := o.newResultCache()
	pv, err := preview.Run(ctx, o.previewDeps(pl.Cache, progress, m.cluster, entries, results), popts, pl.Targets, pl.Head, pl.Base)
	progress.done()
	results.close()
	if err != nil {
		return nil, err
	}
	defer pv.Stop()
	if n := pv.LeftAsIs(); n > 0 {
		// As the plan's renderings are, on stderr: the report is the same either way.
		o.errMu.Lock()
		what := "objects the change leaves as the base has them are"
		if n == 1 {
			what = "object the change leaves as the base has it is"
		}
		fmt.Fprintf(o.cfg.ErrOut, "drift: ephemeral server: %d %s unchanged without a request (--ephemeral-load-all sends them)\n", n, what)
		o.errMu.Unlock()
	}
	if ctx.Err() != nil {
		o.warnf("the run ended (%v) before it finished: the report holds what was finished, and what was not is not-checked", context.Cause(ctx))
	}
	return o.report(ctx, m, pl, entries, pv.Inputs(), pv.Digest())
}

// openPlan is the one way a command gets its plan. It opens the repository, then
// drift's cache directory (refused inside it), the run's render cache and what
// discovery remembers of the repository's files, and hands them to plan.Open as
// values: m says which refs, where drift.yaml is read from, and which cluster
// discovery may read (none for an ephemeral server, or drift targets). Once the
// plan is open, what discovery read is kept for the next run. done keeps the run's
// renderings, the plan's and the preview's, for the next run (saveRenders; say: say
// on stderr how the run got its renderings) and ends the render cache's workers:
// the caller calls it when the run is done with the plan, whatever Open returned.
func (o *Run) openPlan(ctx context.Context, m mode, say bool) (pl *plan.Plan, done func(), err error) {
	done = func() {}
	repo, err := source.Open(o.Repo)
	if err != nil {
		return nil, done, err
	}
	if err := o.openCache(repo); err != nil {
		return nil, done, err
	}
	cache, err := o.renderCache(ctx, repo)
	if err != nil {
		return nil, done, err
	}
	done = func() {
		o.saveRenders(pl, say)
		cache.Close() // its render workers end with the run
	}
	// On a pull request, Helm's lookup hands templates no Secret data unless the
	// runner says so: a template the change wrote can transform a value past any
	// scrubber. Every value it does hand them is scrubbed.
	cache.Secrets = rendercache.SecretLookup{Reveal: m.base == "" || m.lookupSecrets, Values: o.scrub.AddSecretData}
	req := plan.Request{
		Repo: repo, Ref: o.Ref, DefaultRef: m.drift, Base: m.base, Paths: o.Paths, Names: o.Targets,
		Config: plan.ConfigSource{File: o.Config, From: m.configFrom, Known: knownNames()}, Overrides: o.overridesFor(m.cluster), Warnf: o.warnf,
		Cache: cache, Charts: o.Charts.fetcher(o.cfg.Getenv, o.cache),
		MaxTargets: o.MaxTargets, Branches: o.branches(), ArgoClusters: o.liveArgoClusters(m.cluster), LiveObject: o.liveObjects(m.cluster),
		Appliers: o.cfg.Appliers,
	}
	scans := o.openScans(repo)
	if scans != nil {
		req.Scans = scans
	}
	pl, err = plan.Open(ctx, req)
	if scans != nil {
		// A cache directory that cannot be written is said once, by the dry-run
		// cache (resultcache.Store): the next run only reads every file again.
		_ = scans.Save()
	}
	return pl, done, err
}

// cutShort reports a run that ended (ctx: its deadline, a signal) before anything
// was previewed, while doing what when says: every target planned until then is
// not-checked in the report it returns (report).
func (o *Run) cutShort(ctx context.Context, m mode, pl *plan.Plan, err error, when string) (*report.Report, error) {
	o.warnf("%v: the report names what was found, none of it previewed", err)
	targets := preview.NotRun(ctx, pl.Targets, o.shard, when)
	return o.report(ctx, m, pl, o.newBuilder(m.cluster, pl), targets, "")
}

// reportGrace is how long a run that ended at its deadline or on a signal still has
// to write and publish its report (the pull request comment, the check).
const reportGrace = 10 * time.Second

// report builds the run's report of the planned targets' inputs (their entries
// built by entries), judged by the policy.
func (o *Run) report(ctx context.Context, m mode, pl *plan.Plan, entries *entry.Builder, targets []entry.TargetInput, digest string) (*report.Report, error) {
	in := entry.Input{Ref: pl.Ref, Commit: pl.Head.Commit, Base: m.base, Drift: m.drift, Config: pl.Config.Change,
		Targets: append(discoveryInput(pl, o.shard), targets...), Cluster: reportCluster(m.cluster)}
	if pl.Base != nil {
		in.BaseCommit = pl.Base.Commit
	}
	in.Coverage = coverageInput(pl)
	if o.shard.Sharded() {
		in.Shard = &report.Shard{Index: o.shard.Index, Count: o.shard.Count, Plan: digest, By: o.shard.By()}
	}
	rep, err := entry.Build(in, entries)
	if err != nil {
		return nil, err
	}
	if err := policy.Apply(rep, o.Report.policy(pl.Config.FailOn(), o.GitHub.FailOnDeletes)); err != nil {
		return nil, err
	}
	return rep, nil
}

// Publish writes and publishes the report an action (Diff, Detect, Merge) returned
// for o, and returns the Exit the report calls for; err, the action's own, is
// returned as it is. A run its deadline or a signal ended (ctx done) still has
// reportGrace to write and publish.
func (c *Config) Publish(ctx context.Context, o *Run, rep *report.Report, err error) error {
	if err != nil {
		return err
	}
	if rep == nil {
		return errors.New("no report to publish: the action returned neither a report nor an error")
	}
	o.cfg = c
	if o.scrub == nil {
		o.scrub = o.newScrubber()
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), reportGrace)
		defer cancel()
	}
	if err := o.finish(ctx, rep); err != nil {
		return scrubbedError{err: err, scrub: o.scrub}
	}
	return nil
}

// Finish writes and publishes a report built elsewhere (read back from JSON), judged
// by o's policy, as a run writes and publishes its own, and returns the Exit it
// calls for.
func (c *Config) Finish(ctx context.Context, o *Run, rep *report.Report) error {
	o.cfg = c
	if o.scrub == nil {
		o.scrub = o.newScrubber()
	}
	if err := policy.Apply(rep, o.Report.policy(nil, o.GitHub.FailOnDeletes)); err != nil {
		return err
	}
	return o.finish(ctx, rep)
}

// finish writes and publishes a report, and returns the exit status it calls for.
func (o *Run) finish(ctx context.Context, rep *report.Report) error {
	if err := o.write(ctx, rep); err != nil {
		return err
	}
	if err := o.publish(ctx, rep); err != nil {
		// A refusal from GitHub (a fork's read-only token) does not change what the
		// diff found: say so, and exit as the diff does. Anything else is an error.
		if !refused(err) {
			return err
		}
		o.warnf("%v", err)
	}
	switch {
	case !rep.Complete:
		return Errors
	case rep.PolicyFailed():
		return Policy
	case rep.Summary.Changes() > 0:
		return Changes
	}
	return nil
}

// discoveryInput is the report's entry for the files that look like Argo CD or Flux
// objects but cannot be read: errors, so the run is incomplete (none: nil). Of a
// sharded run, the first shard reports them.
func discoveryInput(pl *plan.Plan, shard plan.Shard) []entry.TargetInput {
	if len(pl.DiscoveryFailures) == 0 {
		return nil
	}
	in := entry.TargetInput{Name: "discovery", Path: "."}
	if shard.Owns(0) {
		in.Failures = pl.DiscoveryFailures
	}
	return []entry.TargetInput{in}
}

// liveArgoClusters reads Argo CD's cluster Secrets from the live cluster, unless the
// run has none (--cluster ephemeral).
func (o *Run) liveArgoClusters(cluster string) func(context.Context, plan.ClusterKey, string) ([]appset.Cluster, error) {
	if cluster == ephemeralCluster {
		return nil
	}
	return func(ctx context.Context, key plan.ClusterKey, ns string) ([]appset.Cluster, error) {
		return o.argoClusters(ctx, key, cluster, ns)
	}
}

// liveObjects reads the ConfigMaps and Secrets discovery needs from the live cluster,
// unless the run has none (--cluster ephemeral).
func (o *Run) liveObjects(cluster string) func(context.Context, plan.ClusterKey, string, string, string) (*unstructured.Unstructured, error) {
	if cluster == ephemeralCluster {
		return nil
	}
	return func(ctx context.Context, key plan.ClusterKey, kind, ns, name string) (*unstructured.Unstructured, error) {
		return o.liveObject(ctx, key, cluster, kind, ns, name)
	}
}

// coverageInput is the plan's coverage of the change as the report takes it.
func coverageInput(pl *plan.Plan) []report.CoverageInput {
	var out []report.CoverageInput
	for _, f := range pl.Coverage {
		out = append(out, report.CoverageInput{Path: f.Path, RenamedFrom: f.From, Removed: f.Removed,
			Readers: f.Readers, Gone: f.Gone, Excluded: f.Excluded, Outside: f.Outside, Deploys: f.Deploys})
	}
	return out
}
