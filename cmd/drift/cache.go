package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
)

// newCacheCommand manages the dry-run cache.
func newCacheCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cfg := app.NewConfig(streams.Out, streams.ErrOut)
	cache := &cobra.Command{
		Use:   "cache",
		Short: "Manage drift's dry-run cache",
		Long: `drift keeps the answers of dry runs in its cache directory ($DRIFT_CACHE_DIR/dryrun,
else $XDG_CACHE_HOME/drift/dryrun, else ~/.cache/drift/dryrun), keyed by everything
that decides an answer, so a repeat run sends only what changed. No Secret value is
stored in clear.`,
		Args: cobra.NoArgs,
	}
	var maxSize string
	var runs int
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Bound the dry-run cache's size, least recently used answers first",
		Example: `  # Keep at most 256 MiB of answers
  drift cache prune --max-size 256Mi

  # Keep what the last two runs used, as the GitHub Action does before saving the cache
  drift cache prune --runs 2`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return cfg.PruneCache(maxSize, runs) },
	}
	prune.Flags().StringVar(&maxSize, "max-size", "512Mi", "most the cache may hold afterwards (0 empties it)")
	prune.Flags().IntVar(&runs, "runs", 0, "keep the answers of the last N runs only (each run keeps every answer it used: --runs 1 is enough for the next run); 0 keeps any number")
	cache.AddCommand(prune)
	return cache
}
