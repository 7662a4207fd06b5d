package render

import (
	"context"
	"fmt"
	"net/url"

	"github.com/drift-gitops/drift/internal/reason"
)

// ChartRef names a chart of a chart repository (https://…, with an index.yaml) or an
// OCI registry (oci://…, the chart at RepoURL/Name), at a version or a range.
type ChartRef struct {
	RepoURL, Name, Version string
}

// String names the chart in messages, without credentials a URL may hold.
func (r ChartRef) String() string {
	u := r.RepoURL
	if p, err := url.Parse(u); err == nil {
		p.User, p.RawQuery = nil, ""
		u = p.String()
	}
	return fmt.Sprintf("chart %s %s from %s", r.Name, r.Version, u)
}

// FetchedChart is a chart archive fetched and verified.
type FetchedChart struct {
	Archive, Version, Digest string
	// Resolved says what a version range resolved to ("" for an exact version).
	Resolved string
}

// ChartFetcher fetches charts for the render cache, in drift's own process (never
// a render worker), from the repositories the trusted configuration allows.
type ChartFetcher interface {
	FetchChart(ctx context.Context, ref ChartRef) (FetchedChart, error)
}

// fetchChart completes a spec whose chart comes from a repository with the fetched
// archive; a chart that cannot be had is the target's failure, and a resolved range
// its note.
func (c *Cache) fetchChart(spec Spec) (Spec, *Result) {
	ref := spec.Helm.Chart
	if c.Charts == nil {
		return spec, &Result{Failures: []Failure{{Source: ref.String(), Reason: reason.ChartUnavailable,
			Message: ref.String() + ": no chart repository is allowed: list it in charts.allow of drift.yaml (read from the base branch)"}}}
	}
	ctx := context.Background()
	if c.Isolated != nil {
		ctx = c.Isolated.ctx
	}
	fc, err := c.Charts.FetchChart(ctx, *ref)
	if err != nil {
		return spec, &Result{Failures: []Failure{{Source: ref.String(), Reason: reason.ChartUnavailable, Message: err.Error()}}}
	}
	spec.Helm.Archive, spec.Helm.ChartDigest = fc.Archive, fc.Digest
	var notes *Result
	if fc.Resolved != "" {
		notes = &Result{Notes: []string{fmt.Sprintf("%s (%s)", fc.Resolved, ref.String())}}
	}
	return spec, notes
}
