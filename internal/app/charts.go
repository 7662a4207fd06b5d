package app

import (
	"cmp"
	"context"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/chartrepo"
	"github.com/drift-gitops/drift/internal/render"
)

// Charts are how charts of chart repositories and registries are fetched.
type Charts struct {
	Offline          bool
	ResolveRanges    bool
	RepositoryConfig string
	RegistryConfig   string
}

// fetcher returns what fetches charts from the repositories allow lists (the trusted
// configuration's charts.allow), into the charts of drift's cache directory (cache,
// opened once the repository is: openPlan).
func (c *Charts) fetcher(getenv func(string) string, cache *cachedir.Dir) func(allow []string) render.ChartFetcher {
	return func(allow []string) render.ChartFetcher {
		return chartFetcher{chartrepo.New(chartrepo.Options{
			Allow: allow, Cache: cache.Sub("charts"), Offline: c.Offline, ResolveRanges: c.ResolveRanges,
			RepositoryConfig: cmp.Or(c.RepositoryConfig, getenv("HELM_REPOSITORY_CONFIG")),
			RegistryConfig:   cmp.Or(c.RegistryConfig, getenv("HELM_REGISTRY_CONFIG")),
		})}
	}
}

// chartFetcher is chartrepo's Fetcher as the render cache asks for charts.
type chartFetcher struct{ f *chartrepo.Fetcher }

func (c chartFetcher) FetchChart(ctx context.Context, ref render.ChartRef) (render.FetchedChart, error) {
	ch, err := c.f.Fetch(ctx, chartrepo.Ref{RepoURL: ref.RepoURL, Name: ref.Name, Version: ref.Version})
	if err != nil {
		return render.FetchedChart{}, err
	}
	return render.FetchedChart{Archive: ch.Archive, Version: ch.Version, Digest: ch.Digest, Resolved: ch.Resolved}, nil
}
