// Package gitfixture builds small git repositories for tests, the demo and the
// benchmark, with the git command line. Author, committer and dates are fixed, so the
// same files always give the same commit hashes.
package gitfixture

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is a git repository on disk.
type Repo struct {
	Dir  string
	tick int
}

// Init creates an empty repository in dir with the branch main.
func Init(dir string) (*Repo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &Repo{Dir: dir}
	if _, err := r.Git("init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	return r, nil
}

// Git runs git in the repository with a fixed identity and clock.
func (r *Repo) Git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	date := fmt.Sprintf("2026-01-01T00:%02d:00Z", r.tick%60)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=drift", "GIT_AUTHOR_EMAIL=drift@example.com", "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME=drift", "GIT_COMMITTER_EMAIL=drift@example.com", "GIT_COMMITTER_DATE="+date,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// Write writes files (path relative to the repository -> content); an empty content
// removes the file.
func (r *Repo) Write(files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Commit stages everything and commits; it returns the commit hash.
func (r *Repo) Commit(message string) (string, error) {
	r.tick++
	if _, err := r.Git("add", "-A"); err != nil {
		return "", err
	}
	if _, err := r.Git("commit", "-q", "--allow-empty", "-m", message); err != nil {
		return "", err
	}
	return r.Git("rev-parse", "HEAD")
}

// CommitFiles writes files and commits them.
func (r *Repo) CommitFiles(files map[string]string, message string) (string, error) {
	if err := r.Write(files); err != nil {
		return "", err
	}
	return r.Commit(message)
}

// CommitTree makes the work tree hold exactly the files under src (besides .git) and
// commits it.
func (r *Repo) CommitTree(src, message string) (string, error) {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(r.Dir, e.Name())); err != nil {
				return "", err
			}
		}
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return r.Write(map[string]string{filepath.ToSlash(rel): string(data)})
	})
	if err != nil {
		return "", err
	}
	return r.Commit(message)
}
