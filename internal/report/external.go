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
)

// ExternalDiffEnv names the program that shows diffs instead of drift, as in kubectl.
const ExternalDiffEnv = "KUBECTL_EXTERNAL_DIFF"

// Dump writes the normalized, masked objects of every added, modified or deleted
// object into dir/live and dir/merged, one file per object named as kubectl diff names
// them. A side where the object does not exist has no file. With more than one diffed
// target, each target's files go into a subdirectory named after it.
func Dump(dir string, rep *Report) error {
	for _, side := range []string{"live", "merged"} {
		if err := os.MkdirAll(filepath.Join(dir, side), 0o755); err != nil {
			return fmt.Errorf("failed to create %s: %w", filepath.Join(dir, side), err)
		}
	}
	diffed, _ := rep.splitSkipped()
	for _, t := range diffed {
		// With several targets (maybe several clusters holding the same object), each
		// gets its own subdirectory so that nothing is overwritten.
		sub := ""
		if len(diffed) > 1 {
			sub = strings.ReplaceAll(t.Name, "/", "_")
		}
		for _, o := range t.Objects {
			if o.Category != Add && o.Category != Modify && o.Category != Delete {
				continue
			}
			for side, content := range map[string]string{"live": o.live, "merged": o.merged} {
				if content == "" {
					continue
				}
				if err := os.MkdirAll(filepath.Join(dir, side, sub), 0o755); err != nil {
					return fmt.Errorf("failed to create %s: %w", filepath.Join(dir, side, sub), err)
				}
				p := filepath.Join(dir, side, sub, o.file)
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					return fmt.Errorf("failed to write %s: %w", p, err)
				}
			}
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
// by env once on its live and merged directories, with its output on stdout and stderr.
// Exit status 0 and 1 (differences found) are success, as for diff(1).
func RunExternalDiff(ctx context.Context, env string, rep *Report, stdout, stderr io.Writer) error {
	tmp, err := os.MkdirTemp("", "drift-diff-")
	if err != nil {
		return fmt.Errorf("failed to create a directory for %s: %w", ExternalDiffEnv, err)
	}
	defer os.RemoveAll(tmp)
	if err := Dump(tmp, rep); err != nil {
		return err
	}
	prog, args := ExternalCommand(env, filepath.Join(tmp, "live"), filepath.Join(tmp, "merged"))
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = tmp
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s program %q failed: %w", ExternalDiffEnv, prog, err)
	}
	return nil
}
