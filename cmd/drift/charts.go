package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/chartrepo"
	"github.com/drift-gitops/drift/internal/render"
)

// chartOptions are how charts of chart repositories and registries are fetched.
type chartOptions struct {
	Offline          bool
	ResolveRanges    bool
	RepositoryConfig string
	RegistryConfig   string
}

func (c *chartOptions) addFlags(f *pflag.FlagSet, getenv func(string) string) {
	f.BoolVar(&c.Offline, "offline", false, "render charts of chart repositories and registries from drift's chart cache alone, without reaching them")
	f.BoolVar(&c.ResolveRanges, "resolve-ranges", false, "let a chart version range resolve to the highest version it allows (the report says which); without it only exact versions are fetched")
	f.StringVar(&c.RepositoryConfig, "repository-config", getenv("HELM_REPOSITORY_CONFIG"), "Helm repositories.yaml with the runner's credentials for private chart repositories")
	f.StringVar(&c.RegistryConfig, "registry-config", getenv("HELM_REGISTRY_CONFIG"), "Helm registry config.json with the runner's credentials for OCI registries")
}

// fetcher returns what fetches charts from the repositories allow lists (the trusted
// configuration's charts.allow), into drift's chart cache.
func (c *chartOptions) fetcher(getenv func(string) string) func(allow []string) render.ChartFetcher {
	return func(allow []string) render.ChartFetcher {
		return chartFetcher{chartrepo.New(chartrepo.Options{
			Allow: allow, CacheDir: chartCacheDir(getenv), Offline: c.Offline, ResolveRanges: c.ResolveRanges,
			RepositoryConfig: c.RepositoryConfig, RegistryConfig: c.RegistryConfig,
		})}
	}
}

// chartCacheDir is where fetched charts are kept: $DRIFT_CACHE_DIR/charts, else
// $XDG_CACHE_HOME/drift/charts, else ~/.cache/drift/charts.
func chartCacheDir(getenv func(string) string) string {
	return cachedir.Path(getenv, "charts")
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
