package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/drift-gitops/drift/internal/object"
)

// ExternalDiffEnv names the program that shows diffs instead of drift, as in kubectl.
const ExternalDiffEnv = "KUBECTL_EXTERNAL_DIFF"

// Dump writes the normalized, masked objects of every added, modified or deleted
// object into dir/live and dir/merged (dir/base and dir/head for a split report's
// change), one file per object named as kubectl diff names them. A side where the object does not exist has no file. With more than one diffed
// target, each target's files go into a subdirectory named after it.
//
// Every file is written through an os.Root opened on dir, so no name, symlink or race
// reaches outside it; an object whose file name is not one plain path element is
// refused before anything is written for it. Refused or unwritable objects are
// returned as one error naming each; the others are still written.
func Dump(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("failed to open %s: %w", dir, err)
	}
	defer root.Close()
	for _, sd := range rep.dumpSides() {
		for _, side := range []string{sd.From, sd.To} {
			if err := root.MkdirAll(side, 0o755); err != nil {
				return fmt.Errorf("failed to create %s: %w", filepath.Join(dir, side), err)
			}
		}
	}
	var refused []error
	diffed, _ := rep.splitSkipped()
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
			if o.Category != Add && o.Category != Modify && o.Category != Delete {
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
func (r *Report) dumpSides() []Sides {
	used := map[Sides]bool{}
	diffed, _ := r.splitSkipped()
	for _, t := range diffed {
		for _, o := range t.Objects {
			if o.Category == Add || o.Category == Modify || o.Category == Delete {
				used[o.DiffSides()] = true
			}
		}
	}
	var out []Sides
	for _, sd := range []Sides{SidesApply, SidesChange, SidesChangeLive} {
		if used[sd] {
			out = append(out, sd)
		}
	}
	if len(out) == 0 {
		out = append(out, SidesApply)
	}
	return out
}

// dumpObject writes one object's sides below root.
func dumpObject(root *os.Root, sub string, o Object) error {
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

var externalArg = regexp.MustCompile(`^[a-zA-Z0-9-=]+$`)

// ExternalCommand parses KUBECTL_EXTERNAL_DIFF as kubectl does: the first word is the
// program; later words are passed after the two directories only if they consist of
// letters, digits, '-' and '=' (others are dropped, so nothing reaches a shell).
func ExternalCommand(env, liveDir, mergedDir string) (string, []string) {
	words := strings.Split(env, " ")
	args := []string{liveDir, mergedDir}
	for _, w := range words[1:] {
		if externalArg.MatchString(w) {
			args = append(args, w)
		}
	}
	return words[0], args
}

// RunExternalDiff dumps the report into a temporary directory and runs the program named
// by env on its live and merged directories (base and head for a split report's
// change; once per pair when a report has both), with its output on stdout and
// stderr. Exit status 0 and 1 (differences found) are success, as for diff(1).
func RunExternalDiff(ctx context.Context, env string, rep *Report, stdout, stderr io.Writer) error {
	tmp, err := os.MkdirTemp("", "drift-diff-")
	if err != nil {
		return fmt.Errorf("failed to create a directory for %s: %w", ExternalDiffEnv, err)
	}
	defer os.RemoveAll(tmp)
	// Objects that could not be dumped are named in the error; the program still
	// shows the others.
	dumpErr := Dump(tmp, rep)
	errs := []error{dumpErr}
	for _, sd := range rep.dumpSides() {
		prog, args := ExternalCommand(env, filepath.Join(tmp, sd.From), filepath.Join(tmp, sd.To))
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Dir = tmp
		cmd.Stdout, cmd.Stderr = stdout, stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			err = nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s program %q failed: %w", ExternalDiffEnv, prog, err))
			break
		}
	}
	return errors.Join(errs...)
}
