package report

// Shard marks the report of one shard of a run split across runners (drift diff
// --shard I/N): its share of the objects, which shard.Merge combines with the other
// shards' into the report one run gives.
type Shard struct {
	// Index is 1-based; Count is the number of shards.
	Index int `json:"index"`
	Count int `json:"count"`
	// Plan is a digest of what every shard planned and rendered (the targets and
	// their objects, in order; by cluster, the targets): the shards of one run agree
	// on it.
	Plan string `json:"plan"`
	// By is how the run is split: "cluster" (drift diff --shard-by cluster), each
	// cluster's targets previewed whole by one shard; by object when empty.
	By string `json:"by,omitempty"`
}
