package shard

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// PlannedTarget is what one target of a run renders, in plan order, as drift report
// merge plans the run again (no cluster is needed for it): what the shards split.
type PlannedTarget struct {
	Name    string
	Objects []PlannedObject
	// Cluster is the target's cluster, as the run numbers clusters (the order they
	// first come in the plan), for a run split by cluster.
	Cluster int
}

// PlannedObject is one rendered object, known by what the cluster does not change:
// its group, kind and name, and where it is written. (Its namespace may be the
// cluster's default, and its version what the server prefers.)
type PlannedObject struct {
	Group, Kind, Name, Source string
	Document                  int
}

// String names the object as a refusal does: "apps/Deployment web from apps/web.yaml document 1".
func (p PlannedObject) String() string {
	return fmt.Sprintf("%s %s from %s document %d", strings.TrimPrefix(p.Group+"/"+p.Kind, "/"), p.Name, p.Source, p.Document)
}

// discoveryTarget is the name of the report's entry for files that look like Argo
// CD or Flux objects but cannot be read.
const discoveryTarget = "discovery"

// Check refuses shards' reports that a merge must not believe: the objects
// they report must cover what the run renders (planned, in plan order, as the merge
// planned it) exactly once, each from the shard that owns it; what belongs to a
// whole target (its failures, what pruning deletes or keeps, its notes) only from
// the shard that owns the target; each shard's totals must be its objects'; and no
// text may hold what drift never writes (a category or reason it does not know, a
// control character, a diff line that is not one). A target whose owner reports it
// failed as a whole, with no object from any shard, was not previewed: its objects
// are not asked for (the report is incomplete anyway).
func Check(shards map[string]*report.Report, planned []PlannedTarget) error {
	byIndex := map[int]string{}
	count := 0
	for name, rep := range shards {
		if rep.Shard == nil {
			return fmt.Errorf("%s is not a shard's report: write each shard's with drift diff --shard I/N -o json", name)
		}
		byIndex[rep.Shard.Index], count = name, rep.Shard.Count
		if err := checkText(rep); err != nil {
			return fmt.Errorf("%s: refused: %w", name, err)
		}
		if sum := rep.Counted(); sum != rep.Summary {
			return fmt.Errorf("%s: refused: its summary %+v is not the count of its objects %+v", name, rep.Summary, sum)
		}
	}
	owner := func(n int) int { return n%count + 1 }
	byCluster := false
	for _, rep := range shards {
		byCluster = rep.Shard.By == "cluster"
	}
	targetsOf := func(shard int) map[string]*report.Target {
		m := map[string]*report.Target{}
		rep := shards[byIndex[shard]]
		for i := range rep.Targets {
			m[rep.Targets[i].Name] = &rep.Targets[i]
		}
		return m
	}
	reports := map[int]map[string]*report.Target{}
	for i := 1; i <= count; i++ {
		if byIndex[i] == "" {
			return fmt.Errorf("shard %d/%d is missing: merge the reports of all %d shards", i, count, count)
		}
		reports[i] = targetsOf(i)
		if err := sameTargets(byIndex[i], reports[i], planned); err != nil {
			return err
		}
	}
	first := 0
	for ti, pt := range planned {
		ownerOfTarget := owner(ti)
		// Who previews the target's i-th object: by object, objects are numbered
		// across targets; by cluster, the target's cluster's shard previews it whole.
		ownerOf := func(i int) int { return owner(first + i) }
		if byCluster {
			ownerOfTarget = owner(pt.Cluster)
			ownerOf = func(int) int { return ownerOfTarget }
		}
		// What each shard reports for the target, and whether the owner says it
		// failed as a whole.
		failedWhole, objects := false, 0
		for s := 1; s <= count; s++ {
			t := reports[s][pt.Name]
			for _, o := range t.Objects {
				if o.Kind == "" && o.Category == report.Error && s == ownerOfTarget {
					failedWhole = true
				}
				if o.Kind != "" && o.Inventory == "" {
					objects++
				}
			}
		}
		planObjects := pt.Objects
		if objects == 0 && failedWhole {
			planObjects = nil // not rendered or not previewed, and said so
		}
		for s := 1; s <= count; s++ {
			if err := checkTargetShard(byIndex[s], s, s == ownerOfTarget, reports[s][pt.Name], planObjects, ownerOf); err != nil {
				return err
			}
		}
		for i, po := range planObjects {
			if !reported(reports[ownerOf(i)][pt.Name].Objects, po) {
				return fmt.Errorf("%s: refused: target %s renders %s, which this shard previews, but its report does not hold it", byIndex[ownerOf(i)], pt.Name, po)
			}
		}
		first += len(planObjects)
	}
	// Files discovery could not read are reported by the first shard.
	for s := 2; s <= count; s++ {
		if t := reports[s][discoveryTarget]; t != nil && len(t.Objects) > 0 {
			return fmt.Errorf("%s: refused: discovery's failures are the first shard's to report", byIndex[s])
		}
	}
	return nil
}

// sameTargets refuses a shard whose targets are not the run's.
func sameTargets(name string, got map[string]*report.Target, planned []PlannedTarget) error {
	want := map[string]bool{discoveryTarget: true}
	for _, pt := range planned {
		want[pt.Name] = true
		if got[pt.Name] == nil {
			return fmt.Errorf("%s: refused: it has no target %s, which the run plans: merge with the flags the shards ran with (--ref, --base, --path, --target, --config)", name, pt.Name)
		}
	}
	for n := range got {
		if !want[n] {
			return fmt.Errorf("%s: refused: its target %s is not one the run plans", name, n)
		}
	}
	return nil
}

// checkTargetShard refuses what shard s reports of one target that is not its to
// report: an object the target renders that another shard previews (but errors of
// the target as a whole, which may name a rendered object, such as a broken
// inventory), anything else of a target it does not own (deletions, failures), and
// an object reported twice.
func checkTargetShard(name string, s int, ownsTarget bool, t *report.Target, planned []PlannedObject, owner func(i int) int) error {
	if !ownsTarget && (len(t.Kept) > 0 || len(t.Notes) > 0) {
		return fmt.Errorf("%s: refused: it reports what pruning keeps or notes of target %s, which another shard owns", name, t.Name)
	}
	for _, list := range [][]report.Object{t.Objects, t.Drift} {
		seen := map[int]bool{}
		for _, o := range list {
			i := -1
			if o.Inventory == "" {
				i = slices.IndexFunc(planned, func(p PlannedObject) bool { return matches(o, p) })
			}
			switch {
			case i >= 0 && owner(i) == s:
				if o.Category != report.Error && seen[i] {
					return fmt.Errorf("%s: refused: it reports %s of target %s twice", name, o.Title(), t.Name)
				}
				seen[i] = seen[i] || o.Category != report.Error
			case ownsTarget && (o.Category == report.Error || o.Inventory != ""):
				// What the target as a whole failed on, or what applying it deletes.
			case i >= 0:
				return fmt.Errorf("%s: refused: it reports %s of target %s, which shard %d previews", name, o.Title(), t.Name, owner(i))
			default:
				return fmt.Errorf("%s: refused: target %s does not render %s, and it does not own the target", name, t.Name, o.Title())
			}
		}
	}
	return nil
}

// matches reports whether a report's object is a rendered one: the same group,
// kind and name from the same document (an object that could not be read has only
// its document).
func matches(o report.Object, p PlannedObject) bool {
	if o.Source != p.Source || o.Document != p.Document {
		return false
	}
	return o.Kind == "" || (o.Group == p.Group && o.Kind == p.Kind && o.Name == p.Name)
}

// reported reports whether objs (a target's, of one shard) hold p.
func reported(objs []report.Object, p PlannedObject) bool {
	return slices.ContainsFunc(objs, func(o report.Object) bool { return o.Inventory == "" && matches(o, p) })
}

// categories are the categories drift reports.
var categories = []string{report.Add, report.Modify, report.Unchanged, report.Delete, report.Error}

// checkText refuses what no report drift writes holds.
func checkText(rep *report.Report) error {
	known := reason.All()
	for _, t := range rep.Targets {
		if err := checkPlain("target name", t.Name, false); err != nil {
			return err
		}
		for _, s := range append([]string{t.Skipped, t.Path, t.Renderer, t.Context, t.Applier}, t.Notes...) {
			if err := checkPlain("target "+t.Name, s, true); err != nil {
				return err
			}
		}
		for _, k := range t.Kept {
			if err := checkPlain("a kept object", k.Reason+k.Inventory+k.Kind+k.Name+k.Namespace, true); err != nil {
				return err
			}
		}
		for _, list := range [][]report.Object{t.Objects, t.Drift} {
			for _, o := range list {
				if !slices.Contains(categories, o.Category) {
					return fmt.Errorf("target %s: category %q is not one drift reports", t.Name, o.Category)
				}
				switch {
				case o.Category == report.Unchanged && o.Diff != "":
					return fmt.Errorf("target %s: %s is unchanged but has a diff", t.Name, o.Title())
				case o.Category == report.Modify && o.Diff == "":
					return fmt.Errorf("target %s: %s is modified but has no diff", t.Name, o.Title())
				case o.Category == report.Error && o.Error == "":
					return fmt.Errorf("target %s: %s is an error without a message", t.Name, o.Title())
				}
				if o.ErrorReason != "" && !slices.Contains(known, o.ErrorReason) {
					return fmt.Errorf("target %s: reason %q is not one drift reports", t.Name, o.ErrorReason)
				}
				if o.Story != "" && o.Story != report.StoryChange && o.Story != report.StoryDrift {
					return fmt.Errorf("target %s: story %q is not one drift reports", t.Name, o.Story)
				}
				for _, f := range []string{o.Group, o.Version, o.Kind, o.Namespace, o.Name, o.Source} {
					if err := checkPlain("an object's identity", f, false); err != nil {
						return err
					}
				}
				texts := []string{o.Error, o.What, o.Inventory}
				for _, w := range o.Warnings {
					if !slices.Contains(known, w.Reason) {
						return fmt.Errorf("target %s: reason %q is not one drift reports", t.Name, w.Reason)
					}
					texts = append(texts, w.Message)
				}
				for _, r := range o.Risks {
					texts = append(texts, r.Rule, r.Message)
				}
				for _, s := range texts {
					if err := checkPlain(o.Title(), s, true); err != nil {
						return err
					}
				}
				if err := diffLines(o.Title(), o.Diff); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkPlain refuses a control character (but a newline or tab in a message).
func checkPlain(what, s string, multiline bool) error {
	i := strings.IndexFunc(s, func(r rune) bool {
		return (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') && !(multiline && (r == '\n' || r == '\t'))
	})
	if i >= 0 {
		return fmt.Errorf("%s holds the control character %q, which drift never writes", what, s[i:i+1])
	}
	return nil
}

// diffLines refuses a diff with a line that is not a unified diff's.
func diffLines(what, diff string) error {
	if diff == "" {
		return nil
	}
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if l == "" || strings.ContainsAny(l[:1], " +-@\\") {
			if err := checkPlain(what+"'s diff", l, true); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("%s's diff has the line %q, which is not a unified diff's", what, report.FirstLine(l, 40))
	}
	return nil
}
