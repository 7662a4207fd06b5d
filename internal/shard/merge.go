// Package shard merges the reports of a run split across runners (drift diff
// --shard) into the report the run would have given whole, and refuses shards'
// reports that a merge must not believe.
package shard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/drift-gitops/drift/internal/report"
)

// Merge combines the reports of every shard of one run, named by where they came
// from, into the report the run would have given unsharded: the same JSON, byte for
// byte. It refuses reports that are not shards, a shard missing or given twice, and
// shards of different runs (another commit, base, cluster, drift.yaml or plan).
func Merge(shards map[string]*report.Report) (*report.Report, error) {
	names := make([]string, 0, len(shards))
	for name := range shards {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no shard reports to merge")
	}
	byIndex := map[int]string{}
	first := names[0]
	for _, name := range names {
		s := shards[name].Shard
		if s == nil {
			return nil, fmt.Errorf("%s is not a shard's report: write each shard's with drift diff --shard I/N -o json", name)
		}
		if err := sameRun(first, shards[first], name, shards[name]); err != nil {
			return nil, err
		}
		if prev, dup := byIndex[s.Index]; dup {
			return nil, fmt.Errorf("shard %d/%d is given twice: %s and %s", s.Index, s.Count, prev, name)
		}
		byIndex[s.Index] = name
	}
	count := shards[first].Shard.Count
	for i := 1; i <= count; i++ {
		if byIndex[i] == "" {
			return nil, fmt.Errorf("shard %d/%d is missing: merge the reports of all %d shards", i, count, count)
		}
	}
	out := *shards[byIndex[1]]
	out.Shard, out.Targets = nil, make([]report.Target, len(out.Targets))
	for i := range out.Targets {
		for n := 1; n <= count; n++ {
			t := shards[byIndex[n]].Targets[i]
			m := &out.Targets[i]
			if n == 1 {
				*m = t
				m.Objects, m.Kept, m.Notes, m.Drift = append([]report.Object{}, t.Objects...), nil, nil, nil
			} else {
				m.Objects = append(m.Objects, t.Objects...)
			}
			m.Kept = append(m.Kept, t.Kept...)
			m.Notes = append(m.Notes, t.Notes...)
			m.Drift = append(m.Drift, t.Drift...)
		}
	}
	if c := out.Coverage; c != nil {
		// The first shard's files; whether their targets were previewed is the
		// merged targets'.
		files := append([]report.CoveredFile{}, c.Files...)
		for i := range files {
			files[i].Targets = append([]report.CoverageTarget{}, files[i].Targets...)
		}
		out.Coverage = &report.Coverage{Files: files}
	}
	out.Settle()
	return &out, nil
}

// sameRun refuses two shards that are not of the same run.
func sameRun(aName string, a *report.Report, bName string, b *report.Report) error {
	differs := func(what, x, y string) error {
		return fmt.Errorf("%s and %s are not shards of one run: %s %s against %s; merge the shards of one run only", aName, bName, what, x, y)
	}
	as, bs := a.Shard, b.Shard
	if as == nil || bs == nil {
		return nil // refused by the caller
	}
	switch {
	case a.Commit != b.Commit:
		return differs("they preview commit", short(a.Commit), short(b.Commit))
	case a.BaseCommit != b.BaseCommit || a.Base != b.Base:
		return differs("their base is", report.DescribeRef(a.Base, a.BaseCommit, identity), report.DescribeRef(b.Base, b.BaseCommit, identity))
	case a.Ref != b.Ref || a.Kind != b.Kind || a.Cluster != b.Cluster:
		return differs("they were run as", describeRun(a), describeRun(b))
	case as.Count != bs.Count:
		return differs("they split the run in", fmt.Sprint(as.Count), fmt.Sprint(bs.Count))
	case as.By != bs.By:
		return differs("they split the run by", cmp.Or(as.By, "object"), cmp.Or(bs.By, "object"))
	case !sameConfig(a.Config, b.Config):
		return differs("they read drift.yaml", "one way", "another")
	case as.Plan != bs.Plan || len(a.Targets) != len(b.Targets):
		return differs("they planned and rendered", "plan "+as.Plan, "plan "+bs.Plan)
	}
	return nil
}

func identity(s string) string { return s }

// sameConfig reports whether two reports say the same of drift.yaml.
func sameConfig(a, b *report.ConfigChange) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func describeRun(r *report.Report) string {
	return fmt.Sprintf("(ref %q, kind %q, cluster %q)", r.Ref, r.Kind, r.Cluster)
}
