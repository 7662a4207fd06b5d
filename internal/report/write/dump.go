package write

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/report"
)

// Dump writes the normalized, masked objects of every added, modified or deleted
// object into dir/live and dir/merged (dir/base and dir/head for a split report's
// change), one file per object named as kubectl diff names them. A side where the object does not exist has no file. With more than one diffed
// target, each target's files go into a subdirectory named after it.
//
// Every file is written through an os.Root opened on dir, so no name, symlink or race
// reaches outside it; an object whose file name is not one plain path element is
// refused before anything is written for it. Refused or unwritable objects are
// returned as one error naming each; the others are still written.
func Dump(dir string, rep *report.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("failed to open %s: %w", dir, err)
	}
	defer root.Close()
	for _, sd := range dumpSides(rep) {
		for _, side := range []string{sd.From, sd.To} {
			if err := root.MkdirAll(side, 0o755); err != nil {
				return fmt.Errorf("failed to create %s: %w", filepath.Join(dir, side), err)
			}
		}
	}
	var refused []error
	diffed, _ := splitSkipped(rep)
	for _, t := range diffed {
		// With several targets (maybe several clusters holding the same object), each
		// gets its own subdirectory so that nothing is overwritten.
		sub := ""
		if len(diffed) > 1 {
			sub = strings.ReplaceAll(t.Name, "/", "_")
			if err := object.CheckFileName(sub); err != nil {
				refused = append(refused, fmt.Errorf("target %s: %w", t.Name, err))
				continue
			}
		}
		for _, o := range t.Objects {
			if o.Category != report.Add && o.Category != report.Modify && o.Category != report.Delete {
				continue
			}
			if err := dumpObject(root, sub, o); err != nil {
				refused = append(refused, fmt.Errorf("%s (%s): %w", o.Title(), o.Where(), err))
			}
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("not written into %s: %w", dir, errors.Join(refused...))
	}
	return nil
}

// dumpSides are the pairs of directories the report's diffed objects are dumped
// into, in a fixed order: live and merged, or base and head for a split report's
// change (live and head for a change diffed against the live object).
func dumpSides(r *report.Report) []report.Sides {
	used := map[report.Sides]bool{}
	diffed, _ := splitSkipped(r)
	for _, t := range diffed {
		for _, o := range t.Objects {
			if o.Category == report.Add || o.Category == report.Modify || o.Category == report.Delete {
				used[o.DiffSides()] = true
			}
		}
	}
	var out []report.Sides
	for _, sd := range []report.Sides{report.SidesApply, report.SidesChange, report.SidesChangeLive} {
		if used[sd] {
			out = append(out, sd)
		}
	}
	if len(out) == 0 {
		out = append(out, report.SidesApply)
	}
	return out
}

// dumpObject writes one object's sides below root.
func dumpObject(root *os.Root, sub string, o report.Object) error {
	if err := object.CheckFileName(o.File); err != nil {
		return err
	}
	sd := o.DiffSides()
	for _, f := range [2][2]string{{sd.From, o.FromYAML}, {sd.To, o.ToYAML}} {
		side, content := f[0], f[1]
		if content == "" {
			continue
		}
		d := filepath.Join(side, sub)
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("failed to create %s: %w", d, err)
		}
		if err := root.WriteFile(filepath.Join(d, o.File), []byte(content), 0o600); err != nil {
			return fmt.Errorf("failed to write: %w", err)
		}
	}
	return nil
}
