package plan

import (
	"fmt"
	"testing"
)

// Every unit of work belongs to exactly one shard; a bad --shard says what it wants.
func TestShards(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 7} {
		for unit := range 50 {
			owners := 0
			for i := 1; i <= n; i++ {
				s, err := ParseShard(fmt.Sprintf("%d/%d", i, n))
				if err != nil {
					t.Fatal(err)
				}
				if s.Owns(unit) {
					owners++
				}
			}
			if owners != 1 {
				t.Fatalf("%d shards: unit %d has %d owners", n, unit, owners)
			}
		}
	}
	if !(Shard{}).Owns(12) || (Shard{}).Sharded() {
		t.Error("the zero shard is the whole run")
	}
	for _, bad := range []string{"", "3", "0/2", "3/2", "1/0", "a/b", "-1/2", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("--shard %q accepted", bad)
		}
	}
}
