package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one runner's share of a run split across N runners (--shard I/N): every
// runner plans and renders everything, so that all agree on what there is, and
// previews only its share. The zero Shard is the whole run.
type Shard struct {
	// Index is 1-based; Count is the number of shards (0: not sharded).
	Index, Count int
	// ByCluster splits the run by cluster (--shard-by cluster): a shard previews
	// every target of its clusters, and connects to and renders for no other.
	// Otherwise objects are split across all targets (Owns).
	ByCluster bool
}

// Shard modes for --shard-by.
const (
	ShardByObject  = "object"
	ShardByCluster = "cluster"
)

// ParseShardBy reads --shard-by into s.
func (s *Shard) ParseShardBy(by string) error {
	switch by {
	case "", ShardByObject:
		s.ByCluster = false
	case ShardByCluster:
		s.ByCluster = true
	default:
		return fmt.Errorf("--shard-by %q: use %s or %s", by, ShardByObject, ShardByCluster)
	}
	return nil
}

// By is the shard's mode as --shard-by names it ("" for object, the default).
func (s Shard) By() string {
	if s.ByCluster {
		return ShardByCluster
	}
	return ""
}

// Clusters numbers the distinct clusters of targets in the order they first come,
// for OwnsCluster: every shard of a run numbers them alike.
func Clusters(targets []Target) map[ClusterKey]int {
	out := map[ClusterKey]int{}
	for _, t := range targets {
		if _, ok := out[t.Cluster]; !ok {
			out[t.Cluster] = len(out)
		}
	}
	return out
}

// ParseShard reads "I/N" with 1 ≤ I ≤ N.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 1 || index > count {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 ≤ I ≤ N, such as 2/4", s)
	}
	return Shard{Index: index, Count: count}, nil
}

// Sharded reports whether the run is split.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Owns reports whether the shard previews the n-th unit of work (0-based): objects
// are numbered across all targets in plan order, and target-wide work (render
// failures, pruning, notes) by target, so that large targets are split by object and
// small ones spread over the shards; by cluster, clusters are numbered (Clusters)
// and each previewed whole by its shard.
func (s Shard) Owns(n int) bool {
	return !s.Sharded() || n%s.Count == s.Index-1
}

// String is "I/N", or "" for the whole run.
func (s Shard) String() string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
