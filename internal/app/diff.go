package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/report"
)

// Diff is what drift diff is told beside what every run is: the base to compare with,
// the cluster, where the trusted configuration comes from.
type Diff struct {
	Run
	// Cluster is kubectl's cluster to use, or "ephemeral" for a throwaway server.
	Cluster string
	// Base is the ref the change is compared with ("" none).
	Base string
	// ConfigFrom is plan.ConfigFromBase or plan.ConfigFromHead.
	ConfigFrom string
	// NoSplitDrift skips telling the change apart from drift already in the cluster.
	NoSplitDrift bool
	// CRDsFromContext loads this context's CRDs into an ephemeral server.
	CRDsFromContext string
	// LookupSecrets lets Helm's lookup hand a pull request's templates Secrets' data.
	LookupSecrets bool
	// EphemeralLoadAll loads an ephemeral server with the whole base and previews
	// every object, those the change leaves as they are included.
	EphemeralLoadAll bool
}

// Diff previews what applying the ref would change in its clusters, and returns the
// report (Publish writes and publishes it): drift diff.
func (c *Config) Diff(ctx context.Context, o *Diff) (*report.Report, error) {
	o.cfg = c
	o.Base = o.siteBase(o.gitlabBase(o.Base))
	return o.run(ctx, c, mode{base: o.Base, cluster: o.Cluster, configFrom: o.ConfigFrom,
		splitDrift: o.Base != "" && !o.NoSplitDrift, crdsFromContext: o.CRDsFromContext, lookupSecrets: o.LookupSecrets, loadAll: o.EphemeralLoadAll})
}

// PullRequestFlags are the flags of a pull request's preview, which drift detect
// refuses rather than ignores.
var PullRequestFlags = append([]string{"github-comment", "github-check", "comment-file", "html-artifact", "gitlab-note", "gitlab-status"},
	siteFlags(siteFlagNames.comment, siteFlagNames.status)...)

// Detect finds where the cluster no longer matches the repository, and returns the
// report (Publish writes and publishes it): drift diff of the tracked branch against
// the live clusters, every difference drift.
func (c *Config) Detect(ctx context.Context, o *Run) (*report.Report, error) {
	o.cfg = c
	for _, name := range PullRequestFlags {
		if o.given(name) {
			what, issue := "a pull request's", "an issue (--github-issue)"
			if strings.HasPrefix(name, "gitlab-") {
				what, issue = "a merge request's", "an issue (--gitlab-issue)"
			}
			if w, i := siteReviewFlag(name); w != "" {
				what, issue = w, i
			}
			return nil, fmt.Errorf("--%s is for %s preview (drift diff); drift detect keeps %s instead", name, what, issue)
		}
	}
	return o.run(ctx, c, mode{configFrom: plan.ConfigFromBase, drift: true})
}
