package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/resultcache"
	"github.com/drift-gitops/drift/internal/source"
)

// resultCacheDir is where the dry-run cache is kept in drift's cache directory.
const resultCacheDir = "dryrun"

// openCache opens drift's cache directory for a run reading repo: refused when it,
// or its key, is inside the repository, a symbolic link, or not the user's
// (cachedir.Open). plan.Open calls it as soon as the repository is open.
// A directory that cannot be made or written is not an error: the run keeps what it
// fetches in a temporary one of its own, says so once, and keeps nothing for the next
// run (closeCache removes it).
func (o *Run) openCache(repo *source.Repo) error {
	cache, err := cachedir.Open(cachedir.Options{Getenv: o.cfg.Getenv, Repository: repo.Root})
	var refused *cachedir.Refused
	if errors.As(err, &refused) {
		return err
	}
	if err != nil {
		tmp, remove, terr := cachedir.Temp()
		if terr != nil {
			return err
		}
		o.warnf("drift's cache directory cannot be written (%v): this run keeps nothing for the next one", err)
		cache, o.removeCache = tmp, remove
	}
	o.cache = cache
	return nil
}

// closeCache removes the run's temporary cache directory, if it made one.
func (o *Run) closeCache() {
	if o.removeCache != nil {
		o.removeCache()
		o.removeCache = nil
	}
}

// OpenCache opens drift's cache directory for a command that reads no repository
// (drift setup, drift cache prune), refused when it is inside the git work tree of
// the directory the command runs in (dir), as a run would refuse it.
func (c *Config) OpenCache(dir string) (*cachedir.Dir, error) {
	var root string
	if repo, err := source.Open(dir); err == nil {
		root = repo.Root
	}
	return cachedir.Open(cachedir.Options{Getenv: c.Getenv, Repository: root})
}

// resultCache is the run's dry-run cache: one store under drift's cache directory,
// read per live cluster. Its secret strings are the run's scrubber's: a stored
// answer holds none of them in clear.
type resultCache struct {
	o     *Run
	store *resultcache.Store
	mu    sync.Mutex
	used  []*resultcache.Cluster
}

// newResultCache is the run's dry-run cache; nil with --no-cache, and with
// --show-secrets, whose run tells its scrubber no Secret or masked value: the cache
// could not hide them.
func (o *Run) newResultCache() *resultCache {
	if o.NoCache || o.ShowSecrets {
		return nil
	}
	store := resultcache.Open(o.cache.Sub(resultCacheDir), resultcache.BuildID(), o.scrub.Holds)
	store.Notef = o.warnf
	if o.cfg.Now != nil {
		store.Now = o.cfg.Now
	}
	// Answers wait until the preview knows every value to hide in them (opened).
	store.Hold()
	if v := o.cfg.Getenv("DRIFT_CACHE_SETTLE"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			store.Settle = d
		} else {
			o.warnf("DRIFT_CACHE_SETTLE=%q is not a duration such as 1m: %s is used", v, store.Settle)
		}
	}
	return &resultCache{o: o, store: store}
}

// openScans is what discovery remembers of the files of the run's repository (none
// with --no-cache): what reading each file's text found, by its content's git object id.
func (o *Run) openScans(repo *source.Repo) *resultcache.Scans {
	if o.NoCache {
		return nil
	}
	return resultcache.OpenScans(o.cache.Sub(resultCacheDir), resultcache.BuildID(), repo.Root)
}

// forCluster reads what keys the cluster's answers; nil, said once, when it cannot.
func (rc *resultCache) forCluster(ctx context.Context, c *kube.Clients) *resultcache.Cluster {
	cl, err := resultcache.ForCluster(ctx, c, rc.store)
	if err != nil {
		if ctx.Err() == nil {
			rc.o.warnf("the dry-run cache is not used for %s: %v", c.Host, err)
		}
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.used = append(rc.used, cl)
	return cl
}

// opened stores the answers held until the preview knew every value to hide.
func (rc *resultCache) opened() { rc.store.Release() }

// close puts the run's answers in place for the next run and says on stderr how
// many dry runs the cache answered, and why some could not be: the report itself
// never says, so that it is the same with and without it.
func (rc *resultCache) close() {
	if rc == nil {
		return
	}
	_ = rc.store.Close() // said through Notef
	var hits, sent int64
	bypassed := map[string]int64{}
	for _, cl := range rc.used {
		hits, sent = hits+cl.Hits.Load(), sent+cl.Sent.Load()
		for why, n := range cl.Bypassed() {
			bypassed[why] += n
		}
	}
	if hits+sent == 0 && len(bypassed) == 0 {
		return
	}
	msg := fmt.Sprintf("drift: dry-run cache: %d answered from the cache, %d sent", hits, sent)
	var whys []string
	for why, n := range bypassed {
		whys = append(whys, fmt.Sprintf("%d because %s", n, why))
	}
	sort.Strings(whys)
	if len(whys) > 0 {
		msg += "; not cached: " + strings.Join(whys, ", ")
	}
	rc.o.errMu.Lock()
	defer rc.o.errMu.Unlock()
	fmt.Fprintln(rc.o.cfg.ErrOut, msg)
}

// PruneCache deletes the dry-run cache's packs, oldest first (each run copies the
// answers it used into its own pack, so the oldest hold the least recently used),
// until it holds at most maxSize (a quantity such as 512Mi) and the answers of at most the
// last runs runs (0: any number), and entries no drift of this version reads; it
// says what it removed and what is left.
func (c *Config) PruneCache(maxSize string, runs int) error {
	q, err := resource.ParseQuantity(maxSize)
	if err != nil || q.Sign() < 0 {
		return fmt.Errorf("--max-size %q is not a size such as 512Mi", maxSize)
	}
	if runs < 0 {
		return fmt.Errorf("--runs %d: want 0 (any number) or more", runs)
	}
	cache, err := c.OpenCache(".")
	if err != nil {
		return err
	}
	dir := cache.Sub(resultCacheDir)
	removed, freed, err := resultcache.Prune(dir, q.Value(), runs)
	if err != nil {
		return fmt.Errorf("pruning the dry-run cache in %s: %w", dir.Path(), err)
	}
	fmt.Fprintf(c.Out, "removed %d files (%s); %s left in %s\n", removed, bytesText(freed), bytesText(resultcache.Size(dir)), dir.Path())
	return nil
}

// bytesText is n bytes in binary units, as kubectl writes quantities.
func bytesText(n int64) string {
	return resource.NewQuantity(n, resource.BinarySI).String()
}
