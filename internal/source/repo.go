package source

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repo is an opened git repository.
type Repo struct {
	git *git.Repository
	// mu serializes access to git objects, which are not safe for concurrent use.
	mu *sync.Mutex
	// objects reads trees (each decoded once) and blobs for every snapshot.
	objects *gitObjects
	// Root is the absolute path of the work tree.
	Root string
	// Dir is the slash-separated place, inside the repository, of the directory the
	// repository was opened from ("" for the root).
	Dir string
}

// Snapshot is a read-only view of the repository's files at one ref.
type Snapshot struct {
	// FS holds the files; paths are slash-separated and relative to the repository root.
	FS fs.FS
	// Ref is what the user asked for ("" for the work tree).
	Ref string
	// Commit is the resolved commit hash ("" for the work tree).
	Commit string
}

// ObjectID is the git object id of a path of a commit's snapshot ("." the root; ""
// when there is none); ok is false for the work tree, and for a path reached
// through a symbolic link.
func (s *Snapshot) ObjectID(name string) (id string, ok bool) {
	if t, isTree := s.FS.(*treeFS); isTree {
		return t.ObjectID(name)
	}
	return "", false
}

// Read is how a rendering read a repository path, which says what of it counts.
type Read uint8

const (
	// ReadTree: the whole content of a file or a directory (its git object).
	ReadTree Read = iota
	// ReadEntry: what a probe or a read of the path sees: a file's content, or that
	// it is a directory (what it holds is read path by path).
	ReadEntry
	// ReadListing: a directory's listing: its entries, and each file's content, but
	// not what its subdirectories hold.
	ReadListing
)

// InputID stands for what a rendering that read name as read says counts, in the
// snapshot: equal ids, equal content read. It is "" for a path that is not there;
// ok is false for the work tree, for a path reached through a symbolic link, and
// for an invalid path.
func (s *Snapshot) InputID(name string, read Read) (id string, ok bool) {
	t, isTree := s.FS.(*treeFS)
	if !isTree {
		return "", false
	}
	switch read {
	case ReadEntry:
		return t.EntryID(name)
	case ReadListing:
		return t.ListingID(name)
	}
	return t.ObjectID(name)
}

// Describe names the snapshot for messages: "commit 1a2b3c4 (main)" or "the work tree".
func (s *Snapshot) Describe() string {
	if s.Commit == "" {
		return "the work tree"
	}
	short := s.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	if s.Ref == "" || s.Ref == s.Commit {
		return "commit " + short
	}
	return fmt.Sprintf("commit %s (%s)", short, s.Ref)
}

// Open opens the git repository that contains dir (dir itself or any parent).
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to resolve %s: %w", dir, err)
	}
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, fmt.Errorf("%s is not in a git repository: run drift inside a clone of your GitOps repository, or pass --repo DIR", abs)
		}
		return nil, fmt.Errorf("failed to open git repository at %s: %w", abs, err)
	}
	root := abs
	if wt, err := r.Worktree(); err == nil {
		root = wt.Filesystem.Root()
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		rootReal = root
	}
	absReal, err := filepath.EvalSymlinks(abs)
	if err != nil {
		absReal = abs
	}
	rel, err := filepath.Rel(rootReal, absReal)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	mu := &sync.Mutex{}
	st, lru := objectStorer(r)
	return &Repo{git: r, mu: mu, objects: newGitObjects(st, lru, mu), Root: root, Dir: rel}, nil
}

// Forget empties what the repository keeps in memory of what was read (decoded trees,
// file sizes, go-git's object cache), for a run that has read what it needs: a run
// plans from the repository, then previews what render workers (processes of their
// own) read. Snapshots stay usable: what they read later is read from disk again.
func (r *Repo) Forget() { r.objects.forget() }

// objectStorer is the repository's object storage with its pack files kept open
// between reads: go-git's default opens the pack file again for every object, which
// made reading a directory of 10,000 files spend a third of its time in open(2). Its
// object cache (the bases deltas are read from) holds objectCache bytes: go-git's
// default, 96 MiB, kept every file a run read in memory for the whole run.
func objectStorer(r *git.Repository) (storer.EncodedObjectStorer, *cache.ObjectLRU) {
	st, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return r.Storer, nil
	}
	lru := cache.NewObjectLRU(objectCache)
	return filesystem.NewStorageWithOptions(st.Filesystem(), lru, filesystem.Options{MaxOpenDescriptors: 16}), lru
}

// objectCache is the size of a repository's object cache.
const objectCache = 8 * cache.MiByte

// Path turns a path given relative to the directory the repository was opened from
// into a slash-separated path relative to the repository root. It refuses paths that
// leave the repository.
func (r *Repo) Path(p string) (string, error) {
	p = filepath.ToSlash(p)
	if path.IsAbs(p) {
		rootSlash := filepath.ToSlash(r.Root)
		rel, ok := strings.CutPrefix(p, rootSlash)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			return "", fmt.Errorf("path %s is outside the repository %s", p, r.Root)
		}
		p = strings.TrimPrefix(rel, "/")
	} else {
		p = path.Join(r.Dir, p)
	}
	p = path.Clean(p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("path %s leads outside the repository %s", p, r.Root)
	}
	if p == "." {
		p = ""
	}
	return p, nil
}

// Snapshot returns the files at ref, or the work tree when ref is empty.
func (r *Repo) Snapshot(ref string) (*Snapshot, error) {
	if ref == "" {
		fsys, err := newWorkTreeFS(r)
		if err != nil {
			return nil, err
		}
		return &Snapshot{FS: fsys}, nil
	}
	commit, err := r.resolve(ref)
	if err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("failed to read the tree of commit %s: %w", commit.Hash, err)
	}
	return &Snapshot{FS: newTreeFS(tree, r.objects), Ref: ref, Commit: commit.Hash.String()}, nil
}

// CheckPaths reports the first of paths (repository-relative) that the snapshot lacks.
func (s *Snapshot) CheckPaths(paths []string) error {
	for _, p := range paths {
		name := cmp.Or(p, ".")
		if _, err := fs.Stat(s.FS, name); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("path %s is not in %s: check --path (paths are relative to --repo, default the current directory)", displayPath(p), s.Describe())
			}
			return fmt.Errorf("failed to read path %s in %s: %w", displayPath(p), s.Describe(), err)
		}
	}
	return nil
}

func displayPath(p string) string {
	if p == "" {
		return "/ (the repository root)"
	}
	return p
}
