package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// workTreeFS is the work tree as it is on disk, uncommitted edits and untracked files
// included, less what is not the repository's own content: .git (which holds the
// token actions/checkout stores), what .gitignore excludes, and nested repositories
// (submodules). Every access resolves its path here, one name at a time, following
// symlinks only inside the repository, so no symlink, generator, values file or
// .Files.Get reaches those files either.
type workTreeFS struct {
	root   *os.Root
	fsys   fs.FS
	ignore gitignore.Matcher

	// dirs are the directories resolve walked to and checked, reached with no
	// symlink on the way: a later path under one starts there, not at the root.
	mu   sync.Mutex
	dirs map[string]bool
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
	return &workTreeFS{root: root, fsys: root.FS(), ignore: gitignore.NewMatcher(patterns)}, nil
}

// ErrNotOwnContent is returned for a path that is not the repository's own content:
// inside .git, ignored by .gitignore, or in a submodule.
var ErrNotOwnContent = errors.New("is not part of the repository's content")

func (w *workTreeFS) Open(name string) (fs.File, error) {
	real, err := w.resolve("open", name)
	if err != nil {
		return nil, err
	}
	return w.fsys.Open(real)
}

func (w *workTreeFS) ReadFile(name string) ([]byte, error) {
	real, err := w.resolve("read", name)
	if err != nil {
		return nil, err
	}
	return fs.ReadFile(w.fsys, real)
}

func (w *workTreeFS) Stat(name string) (fs.FileInfo, error) {
	real, err := w.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	return fs.Stat(w.fsys, real)
}

// RealPath is name with every symlink resolved.
func (w *workTreeFS) RealPath(name string) (string, error) { return w.resolve("stat", name) }

// ReadDir lists a directory without .git and ignored files. A nested repository stays
// in the list, so that reading it fails with a message rather than vanishing.
func (w *workTreeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	real, err := w.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(w.fsys, real)
	if err != nil {
		return nil, err
	}
	var dir []string
	if real != "." {
		dir = strings.Split(real, "/")
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
func (w *workTreeFS) ReadLink(name string) (string, error) {
	if dir := path.Dir(name); dir != "." {
		if _, err := w.resolve("readlink", dir); err != nil {
			return "", err
		}
	}
	if err := w.check("readlink", name, strings.Split(name, "/"), false); err != nil {
		return "", err
	}
	return fs.ReadLink(w.fsys, name)
}

// resolve walks name one component at a time, following symlinks inside the work
// tree, and returns the real path. It refuses any step, on the way or at the end, that
// is not the repository's own content.
func (w *workTreeFS) resolve(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return ".", nil
	}
	parts := strings.Split(name, "/")
	var done []string
	w.mu.Lock()
	for i := len(parts) - 1; i > 0; i-- {
		if w.dirs[strings.Join(parts[:i], "/")] {
			done, parts = parts[:i:i], parts[i:]
			break
		}
	}
	w.mu.Unlock()
	plain := true // no symlink followed: the path walked is the real one
	for hops := 0; len(parts) > 0; {
		cur := append(append([]string{}, done...), parts[0])
		rel := strings.Join(cur, "/")
		info, err := w.root.Lstat(rel)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
			}
			return "", &fs.PathError{Op: op, Path: name, Err: err}
		}
		if err := w.check(op, name, cur, info.IsDir()); err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			if plain && info.IsDir() {
				w.mu.Lock()
				if w.dirs == nil {
					w.dirs = map[string]bool{}
				}
				w.dirs[rel] = true
				w.mu.Unlock()
			}
			done, parts = cur, parts[1:]
			continue
		}
		plain = false
		if hops++; hops > maxSymlinkHops {
			return "", &fs.PathError{Op: op, Path: name, Err: errors.New("too many levels of symbolic links")}
		}
		dest, err := w.root.Readlink(rel)
		if err != nil {
			return "", &fs.PathError{Op: op, Path: name, Err: err}
		}
		joined := path.Join(path.Dir(rel), dest)
		if path.IsAbs(dest) || joined == ".." || strings.HasPrefix(joined, "../") {
			return "", &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("symlink %s -> %s %w", rel, dest, ErrOutside)}
		}
		rest := parts[1:]
		done, parts = nil, nil
		if joined != "." {
			parts = strings.Split(joined, "/")
		}
		parts = append(parts, rest...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// check refuses one step of a path: .git, an ignored path, or a directory that is a
// repository of its own.
func (w *workTreeFS) check(op, name string, parts []string, isDir bool) error {
	rel := strings.Join(parts, "/")
	switch {
	case parts[len(parts)-1] == ".git":
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%s %w: drift never reads git's own files", rel, ErrNotOwnContent)}
	case w.ignore.Match(parts, isDir):
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%s is ignored by .gitignore and so %w: drift never reads ignored files", rel, ErrNotOwnContent)}
	case isDir:
		if _, err := w.root.Lstat(rel + "/.git"); err == nil {
			return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%s is a git submodule or a repository of its own and so %w: drift reads only this repository's files", rel, ErrNotOwnContent)}
		}
	}
	return nil
}
