package shard_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/golden"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/shard"
)

// shardsOf builds the reports of n shards of in as drift --shard splits a run: the
// i-th object of all targets to shard i mod n, each target's failures to the shard
// of its index, the rest of each shard's objects handed in as Elsewhere.
func shardsOf(t *testing.T, in entry.Input, n int) map[string]*report.Report {
	t.Helper()
	out := map[string]*report.Report{}
	for s := 1; s <= n; s++ {
		sin := in
		sin.Shard = &report.Shard{Index: s, Count: n, Plan: "p"}
		sin.Targets = nil
		unit := 0
		for ti, tin := range in.Targets {
			st := tin
			st.Results, st.Elsewhere = nil, nil
			for _, r := range tin.Results {
				if unit%n == s-1 {
					st.Results = append(st.Results, r)
				} else {
					st.Elsewhere = append(st.Elsewhere, r)
				}
				unit++
			}
			if ti%n != s-1 {
				st.Failures, st.Notes, st.Kept = nil, nil, nil
			}
			sin.Targets = append(sin.Targets, st)
		}
		rep := entrytest.Build(t, sin, entry.Options{})
		var buf bytes.Buffer
		if err := report.WriteJSON(&buf, rep); err != nil {
			t.Fatal(err)
		}
		read, err := report.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("shard-%d.json", s)] = read
	}
	return out
}

// The shards of a run merge into the run's report, byte for byte, however many
// there are; a value of a Secret one shard previews is scrubbed from an object
// another shard previews, as in the whole run.
func TestMergedShardsAreTheRun(t *testing.T) {
	t.Parallel()
	in := entrytest.SampleInput(t)
	leaky := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaky, namespace: shop}\ndata: {copy: s3cr3t-new}\n"
	in.Targets[0].Results = append(in.Targets[0].Results, reporttest.Result(t, "shop/leaky.yaml", 1, leaky, "", leaky))
	in.Targets = append(in.Targets, entry.TargetInput{Name: "other", Notes: []string{"a note"}, Results: []dryrun.Result{
		reporttest.Result(t, "other/a.yaml", 1, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n", "", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: other}\n"),
	}})
	whole := entrytest.Build(t, in, entry.Options{})
	var want bytes.Buffer
	if err := report.WriteJSON(&want, whole); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(want.String(), "s3cr3t-new") {
		t.Fatal("the whole run's report leaks the Secret's value")
	}
	for _, n := range []int{1, 2, 3, 7} {
		merged, err := shard.Merge(shardsOf(t, in, n))
		if err != nil {
			t.Fatalf("%d shards: %v", n, err)
		}
		var got bytes.Buffer
		if err := report.WriteJSON(&got, merged); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d shards merged differ from the run:\n%s", n, golden.Diff(want.String(), got.String()))
		}
	}
}

// Merge refuses what is not the shards of one run, saying which files and why.
func TestMergeRefusesMixedShards(t *testing.T) {
	t.Parallel()
	in := entrytest.SampleInput(t)
	cases := map[string]struct {
		change func(map[string]*report.Report)
		want   string
	}{
		"missing":    {func(s map[string]*report.Report) { delete(s, "shard-2.json") }, "shard 2/3 is missing"},
		"twice":      {func(s map[string]*report.Report) { s["copy.json"] = s["shard-1.json"] }, "shard 1/3 is given twice: copy.json and shard-1.json"},
		"not shard":  {func(s map[string]*report.Report) { s["shard-3.json"].Shard = nil }, "shard-3.json is not a shard's report"},
		"commit":     {func(s map[string]*report.Report) { s["shard-2.json"].Commit = "fedcba9876543210" }, "shard-1.json and shard-2.json are not shards of one run: they preview commit 0123456789ab against fedcba987654"},
		"plan":       {func(s map[string]*report.Report) { s["shard-3.json"].Shard.Plan = "q" }, "they planned and rendered plan p against plan q"},
		"count":      {func(s map[string]*report.Report) { s["shard-3.json"].Shard.Count = 4 }, "they split the run in 3 against 4"},
		"drift kind": {func(s map[string]*report.Report) { s["shard-2.json"].Kind = report.KindDrift }, "they were run as"},
	}
	for name, c := range cases {
		shards := shardsOf(t, in, 3)
		c.change(shards)
		if _, err := shard.Merge(shards); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
	if _, err := report.Read(strings.NewReader(`{"schemaVersion": "other/v9"}`)); err == nil {
		t.Error("a report of another schema was read")
	}
}
