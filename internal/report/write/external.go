package write

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

	"github.com/drift-gitops/drift/internal/report"
)

// ExternalDiffEnv names the program that shows diffs instead of drift, as in kubectl.
const ExternalDiffEnv = "KUBECTL_EXTERNAL_DIFF"

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

// Command is one run of the external diff program: the program, its arguments, the
// directory it runs in, and where its output goes.
type Command struct {
	Name           string
	Args           []string
	Dir            string
	Stdout, Stderr io.Writer
}

// Exec runs a command to its end. An error with an ExitCode method (as
// *exec.ExitError has) carries the program's exit status.
type Exec func(ctx context.Context, c Command) error

// Run is the Exec of a real run: the program found on PATH and run without a shell,
// killed when ctx ends.
func Run(ctx context.Context, c Command) error {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	return cmd.Run()
}

// ExternalDiff dumps the report into a temporary directory and runs the program named
// by env through run on its live and merged directories (base and head for a split
// report's change; once per pair when a report has both), with its output on stdout
// and stderr. Exit status 0 and 1 (differences found) are success, as for diff(1).
func ExternalDiff(ctx context.Context, env string, run Exec, rep *report.Report, stdout, stderr io.Writer) error {
	tmp, err := os.MkdirTemp("", "drift-diff-")
	if err != nil {
		return fmt.Errorf("failed to create a directory for %s: %w", ExternalDiffEnv, err)
	}
	defer os.RemoveAll(tmp)
	// Objects that could not be dumped are named in the error; the program still
	// shows the others.
	dumpErr := Dump(tmp, rep)
	errs := []error{dumpErr}
	for _, sd := range dumpSides(rep) {
		prog, args := ExternalCommand(env, filepath.Join(tmp, sd.From), filepath.Join(tmp, sd.To))
		err := run(ctx, Command{Name: prog, Args: args, Dir: tmp, Stdout: stdout, Stderr: stderr})
		var exit interface{ ExitCode() int }
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
