package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Shard marks the report of one shard of a run split across runners (drift diff
// --shard I/N): its share of the objects, which Merge combines with the other
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

// Read reads a JSON report drift wrote.
func Read(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a drift JSON report: %w", err)
	}
	if rep.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("not a drift JSON report of schema %s (schemaVersion %q)", SchemaVersion, rep.SchemaVersion)
	}
	return &rep, nil
}

// Merge combines the reports of every shard of one run, named by where they came
// from, into the report the run would have given unsharded: the same JSON, byte for
// byte. It refuses reports that are not shards, a shard missing or given twice, and
// shards of different runs (another commit, base, cluster, drift.yaml or plan).
func Merge(shards map[string]*Report) (*Report, error) {
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
	out.Shard, out.Summary, out.Targets = nil, Summary{}, make([]Target, len(out.Targets))
	for i := range out.Targets {
		for n := 1; n <= count; n++ {
			t := shards[byIndex[n]].Targets[i]
			m := &out.Targets[i]
			if n == 1 {
				*m = t
				m.Objects, m.Kept, m.Notes, m.Drift = append([]Object{}, t.Objects...), nil, nil, nil
			} else {
				m.Objects = append(m.Objects, t.Objects...)
			}
			m.Kept = append(m.Kept, t.Kept...)
			m.Notes = append(m.Notes, t.Notes...)
			m.Drift = append(m.Drift, t.Drift...)
		}
		sortObjects(out.Targets[i].Objects)
		sortObjects(out.Targets[i].Drift)
		out.Summary.add(out.Targets[i].Objects)
	}
	if c := out.Coverage; c != nil {
		// The first shard's files; whether their targets were previewed is the
		// merged targets'.
		files := append([]CoveredFile{}, c.Files...)
		for i := range files {
			files[i].Targets = append([]CoverageTarget{}, files[i].Targets...)
		}
		out.Coverage = &Coverage{Files: files}
		resolveCoverage(&out)
	}
	out.Summary.NotPreviewed = notPreviewed(out.Targets)
	out.Summary.NotCovered = notCovered(out.Coverage)
	out.Complete = out.complete()
	return &out, nil
}

// sameRun refuses two shards that are not of the same run.
func sameRun(aName string, a *Report, bName string, b *Report) error {
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
		return differs("their base is", DescribeRef(a.Base, a.BaseCommit, identity), DescribeRef(b.Base, b.BaseCommit, identity))
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
func sameConfig(a, b *ConfigChange) bool {
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

func describeRun(r *Report) string {
	return fmt.Sprintf("(ref %q, kind %q, cluster %q)", r.Ref, r.Kind, r.Cluster)
}
