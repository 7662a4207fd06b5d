package report

import (
	"fmt"
	"slices"
	"strings"
)

// Coverage accounts for every file a pull request touches (docs/report.md#coverage):
// whether the targets that read it were previewed, or why not, or that nothing
// drift found reads it.
type Coverage struct {
	Files []CoveredFile `json:"files"`
}

// Statuses of a file the change touches.
const (
	// CoveragePreviewed: a target that reads the file was previewed.
	CoveragePreviewed = "previewed"
	// CoverageNotPreviewed: the targets that read the file were not previewed
	// (skipped, refused, failed), or the file is outside the paths the run was
	// asked for.
	CoverageNotPreviewed = "not-previewed"
	// CoverageReadByNothing: no target drift found reads the file, and a controller
	// could deploy from it: the report is incomplete.
	CoverageReadByNothing = "read-by-nothing"
	// CoverageNotDeployed: no target reads the file and it deploys nothing (it holds
	// no manifest, or drift.yaml's deploysNothing names it).
	CoverageNotDeployed = "not-deployed"
)

// CoveredFile is one file the change touches.
type CoveredFile struct {
	Path string `json:"path"`
	// RenamedFrom is the base's path of a file the change renames; Removed says the
	// change removes the file.
	RenamedFrom string `json:"renamedFrom,omitempty"`
	Removed     bool   `json:"removed,omitempty"`
	Status      string `json:"status"`
	// Targets are the targets that read the file, each previewed or not (and why).
	Targets []CoverageTarget `json:"targets,omitempty"`
	// RemovedTargets are targets the change removes that read the file in the base.
	RemovedTargets []string `json:"removedTargets,omitempty"`
	// Why says why a file is not previewed or deploys nothing.
	Why string `json:"why,omitempty"`
	// Incomplete says the file makes the report incomplete: nothing previews what a
	// controller could deploy from it.
	Incomplete bool `json:"incomplete,omitempty"`
}

// CoverageTarget is a target that reads a changed file.
type CoverageTarget struct {
	Name      string `json:"name"`
	Previewed bool   `json:"previewed"`
	// Why says why the target was not previewed.
	Why string `json:"why,omitempty"`
}

// CoverageInput is one file the change touches, as the run planned it.
type CoverageInput struct {
	Path, RenamedFrom string
	Removed           bool
	// Readers are the targets that read the file; Gone the targets the change
	// removes that read it in the base.
	Readers, Gone []string
	// For a file nothing reads: Excluded, why nothing deploys it (drift.yaml's
	// deploysNothing, Flux's source ignore rules); Outside (not below the paths
	// asked for) and Deploys (a controller could deploy from it).
	Excluded         string
	Outside, Deploys bool
}

// NewCoverage is the report's coverage of the files the change touches, before
// Settle resolves it against the targets (nil: the change touches no file, or the
// run ended before it was worked out).
func NewCoverage(in []CoverageInput) *Coverage {
	if len(in) == 0 {
		return nil
	}
	c := &Coverage{Files: []CoveredFile{}}
	for _, f := range in {
		cf := CoveredFile{Path: f.Path, RenamedFrom: f.RenamedFrom, Removed: f.Removed, RemovedTargets: f.Gone}
		for _, r := range f.Readers {
			cf.Targets = append(cf.Targets, CoverageTarget{Name: r})
		}
		switch {
		case len(f.Readers) > 0:
			// Resolved from the targets' outcomes (resolveCoverage).
		case len(f.Gone) > 0:
			cf.Status = CoverageNotPreviewed
			cf.Why = "read in the base by " + strings.Join(f.Gone, ", ") + ", which the change removes: what that deletes is previewed where the object defining it is deleted"
		case f.Excluded != "":
			cf.Status, cf.Why = CoverageNotDeployed, f.Excluded
		case f.Outside:
			cf.Status, cf.Why = CoverageNotPreviewed, "not below the paths the run was asked for (--path)"
		case f.Deploys:
			cf.Status, cf.Incomplete = CoverageReadByNothing, true
			cf.Why = "no target drift found reads it, and a controller could deploy from it"
		default:
			cf.Status, cf.Why = CoverageNotDeployed, "no target reads it, and it holds no Kubernetes object, kustomization, chart or values"
		}
		c.Files = append(c.Files, cf)
	}
	return c
}

// resolveCoverage decides, from the report's targets, whether each file that
// targets read was previewed: previewed when a target that reads it was and none
// that reads it makes the report incomplete (a target the change touches that was
// not previewed, an object from the file that could not be, or errors in a
// kustomize or Helm target none of whose objects comes from the file); not
// previewed otherwise, naming why.
func resolveCoverage(rep *Report) {
	if rep.Coverage == nil {
		return
	}
	byName := map[string]*Target{}
	for i := range rep.Targets {
		byName[rep.Targets[i].Name] = &rep.Targets[i]
	}
	for i := range rep.Coverage.Files {
		f := &rep.Coverage.Files[i]
		if len(f.Targets) == 0 {
			continue
		}
		previewed, incomplete := false, false
		var why []string
		for j := range f.Targets {
			ct := &f.Targets[j]
			ct.Previewed, ct.Why = false, ""
			t := byName[ct.Name]
			switch {
			case t == nil:
				ct.Why = "not in this report"
			case t.Skipped != "":
				ct.Why = t.Skipped
				incomplete = incomplete || t.NotPreviewed
			case failedFrom(*t, f.Path) > 0:
				ct.Why = Plural(failedFrom(*t, f.Path), "object", "objects") + " from it could not be previewed"
				incomplete = true
			case errorsIn(*t) > 0 && !renders(*t, f.Path) && t.Renderer != "plain":
				// What the file gives the target (a patch, values) cannot be told from
				// the objects that failed. (A plain target's objects are its files': a
				// file none comes from gives it nothing.)
				ct.Why = Plural(errorsIn(*t), "object", "objects") + " could not be previewed"
				incomplete = true
			default:
				ct.Previewed, previewed = true, true
				continue
			}
			why = append(why, DisplayName(ct.Name)+": "+ct.Why)
		}
		f.Status, f.Why = CoveragePreviewed, ""
		if incomplete || !previewed {
			f.Status, f.Why = CoverageNotPreviewed, strings.Join(why, "; ")
		}
	}
}

// failedFrom counts a target's objects from file that could not be previewed.
func failedFrom(t Target, file string) int {
	n := 0
	for _, o := range t.Objects {
		if o.Category == Error && o.Source == file {
			n++
		}
	}
	return n
}

// renders reports whether any of a target's objects comes from file.
func renders(t Target, file string) bool {
	return slices.ContainsFunc(t.Objects, func(o Object) bool { return o.Source == file })
}

// errorsIn counts a target's objects that could not be previewed.
func errorsIn(t Target) int {
	n := 0
	for _, o := range t.Objects {
		if o.Category == Error {
			n++
		}
	}
	return n
}

// notCovered counts the files that make the report incomplete by coverage alone.
func notCovered(c *Coverage) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, f := range c.Files {
		if f.Incomplete {
			n++
		}
	}
	return n
}

// Count is how many of the change's files have status.
func (c *Coverage) Count(status string) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, f := range c.Files {
		if f.Status == status {
			n++
		}
	}
	return n
}

// Of are the files with status, in path order.
func (c *Coverage) Of(status string) []CoveredFile {
	if c == nil {
		return nil
	}
	var out []CoveredFile
	for _, f := range c.Files {
		if f.Status == status {
			out = append(out, f)
		}
	}
	return out
}

// Line is the coverage in one line: "4 files changed: 2 previewed, 1 not
// previewed, 1 not deployed".
func (c *Coverage) Line() string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, s := range []struct{ status, words string }{
		{CoveragePreviewed, "previewed"}, {CoverageNotPreviewed, "not previewed"},
		{CoverageReadByNothing, "read by nothing"}, {CoverageNotDeployed, "deploying nothing"},
	} {
		if n := c.Count(s.status); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s.words))
		}
	}
	if len(parts) == 0 {
		return "the change touches no file"
	}
	return Plural(len(c.Files), "file", "files") + " changed: " + strings.Join(parts, ", ")
}

// Name is the file as the report shows it: its path, and the path it was renamed
// from or that it is removed, each through quote.
func (f CoveredFile) Name(quote func(string) string) string {
	switch {
	case f.RenamedFrom != "":
		return quote(shown(f.Path)) + " (renamed from " + quote(shown(f.RenamedFrom)) + ")"
	case f.Removed:
		return quote(shown(f.Path)) + " (removed)"
	}
	return quote(shown(f.Path))
}

// Readers names the targets that read the file, each through quote.
func (f CoveredFile) Readers(quote func(string) string) string {
	var names []string
	for _, t := range f.Targets {
		names = append(names, quote(DisplayName(t.Name)))
	}
	return strings.Join(slices.Compact(names), ", ")
}

// CoverageOf is the coverage of the files in, resolved against targets (drift
// targets, which previews nothing: a target planned to be previewed counts as
// previewed).
func CoverageOf(in []CoverageInput, targets []Target) *Coverage {
	rep := &Report{Targets: targets, Coverage: NewCoverage(in)}
	resolveCoverage(rep)
	return rep.Coverage
}
