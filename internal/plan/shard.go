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
// small ones spread over the shards.
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
