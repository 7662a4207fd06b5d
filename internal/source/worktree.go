package source

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// workTreeFS is the work tree as it is on disk, uncommitted edits and untracked files
// included, less .git and what .gitignore excludes. os.Root confines every access to the
// repository: a symlink that leads outside it fails to open.
type workTreeFS struct {
	fsys   fs.FS
	ignore gitignore.Matcher
}

func newWorkTreeFS(r *Repo) (*workTreeFS, error) {
	root, err := os.OpenRoot(r.Root)
	if err != nil {
		return nil, fmt.Errorf("failed to open the work tree %s: %w", r.Root, err)
	}
	var patterns []gitignore.Pattern
	if wt, err := r.git.Worktree(); err == nil {
		patterns, _ = gitignore.ReadPatterns(wt.Filesystem, nil)
		patterns = append(patterns, wt.Excludes...)
	}
	return &workTreeFS{fsys: root.FS(), ignore: gitignore.NewMatcher(patterns)}, nil
}

func (w *workTreeFS) Open(name string) (fs.File, error) { return w.fsys.Open(name) }

func (w *workTreeFS) ReadFile(name string) ([]byte, error) { return fs.ReadFile(w.fsys, name) }

func (w *workTreeFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(w.fsys, name) }

// ReadDir lists a directory without .git and ignored files.
func (w *workTreeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(w.fsys, name)
	if err != nil {
		return nil, err
	}
	var dir []string
	if name != "." {
		dir = strings.Split(name, "/")
	}
	out := entries[:0]
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		parts := append(append([]string{}, dir...), e.Name())
		if w.ignore.Match(parts, e.IsDir()) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// ReadLink returns a symlink's target text, as git stores it.
func (w *workTreeFS) ReadLink(name string) (string, error) { return fs.ReadLink(w.fsys, name) }
