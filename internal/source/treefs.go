package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxSymlinkHops bounds symlink chains, as the kernel does with ELOOP.
const maxSymlinkHops = 40

// treeFS is a read-only fs.FS over one commit's tree, read straight from git objects
// (through the repository's gitObjects, which decodes each tree once). Symlinks are
// followed while they stay inside the repository. It is safe for concurrent use:
// targets render in parallel over the same snapshot.
type treeFS struct {
	// root is the commit's tree, for walking it whole (hashes); objects reads it.
	root    *object.Tree
	objects *gitObjects
}

func newTreeFS(root *object.Tree, objects *gitObjects) *treeFS {
	return &treeFS{root: root, objects: objects}
}

// Open implements fs.FS.
func (t *treeFS) Open(name string) (fs.File, error) { return t.open(name) }

// ReadFile implements fs.ReadFileFS.
func (t *treeFS) ReadFile(name string) ([]byte, error) { return t.readFile(name) }

// Stat implements fs.StatFS.
func (t *treeFS) Stat(name string) (fs.FileInfo, error) { return t.stat(name) }

// ReadDir implements fs.ReadDirFS. Symlinks are reported with the type of what they
// point to, so walkers descend into linked directories inside the repository.
func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) { return t.readDir(name) }

// RealPath is name with every symlink resolved.
func (t *treeFS) RealPath(name string) (string, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return "", err
	}
	return n.path, nil
}

// TreeID is the git object id of the tree t reads: equal ids, equal files.
func (t *treeFS) TreeID() string { return t.root.Hash.String() }

// BlobHash is the git object id of a file's content (symlinks followed): two files
// of any commits with the same id hold the same bytes.
func (t *treeFS) BlobHash(name string) (string, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return "", err
	}
	if n.entry == nil {
		return "", &fs.PathError{Op: "stat", Path: name, Err: errors.New("not a file")}
	}
	return n.entry.Hash.String(), nil
}

// ObjectID is the git object id of the file or directory name ("." the root), ""
// when there is none; ok is false when name is reached through a symbolic link (a
// link's id is not its target's) or is not a valid path.
func (t *treeFS) ObjectID(name string) (id string, ok bool) {
	e, ok := t.entryAt(name)
	if !ok || e == nil {
		return "", ok
	}
	return e.Hash.String(), true
}

// ListingID stands for what listing the directory name ("." the root) reads: the
// name and mode of each entry, and the content of each file in it, but not what its
// subdirectories hold. It is "" when name is no directory, and ok is false when
// name is reached through a symbolic link or is not a valid path.
func (t *treeFS) ListingID(name string) (id string, ok bool) {
	e, ok := t.entryAt(name)
	if !ok || e == nil || e.Mode != filemode.Dir {
		return "", ok
	}
	dir, err := t.objects.tree(e.Hash)
	if err != nil {
		return "", false
	}
	sum := sha256.New()
	for _, e := range dir.entries {
		if e.Mode == filemode.Dir {
			fmt.Fprintf(sum, "%o %s\x00", e.Mode, e.Name)
			continue
		}
		fmt.Fprintf(sum, "%o %s %s\x00", e.Mode, e.Name, e.Hash)
	}
	return "listing:" + hex.EncodeToString(sum.Sum(nil)), true
}

// EntryID is what a probe or a read of name sees: a file's git object id, "dir"
// for a directory, "" when there is nothing; ok as for ObjectID.
func (t *treeFS) EntryID(name string) (id string, ok bool) {
	e, ok := t.entryAt(name)
	switch {
	case !ok || e == nil:
		return "", ok
	case e.Mode == filemode.Dir:
		return "dir", true
	}
	return e.Hash.String(), true
}

// entryAt is the tree entry at name (the root's as a directory for "."), nil when
// there is none; ok is false when name is reached through a symbolic link or is not
// a valid path.
func (t *treeFS) entryAt(name string) (entry *object.TreeEntry, ok bool) {
	if !fs.ValidPath(name) {
		return nil, false
	}
	if name == "." {
		return &object.TreeEntry{Name: ".", Mode: filemode.Dir, Hash: t.root.Hash}, true
	}
	dir, err := t.objects.tree(t.root.Hash)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(name, "/")
	for i, part := range parts {
		entry, found := dir.entry(part)
		switch {
		case !found:
			return nil, true
		case entry.Mode == filemode.Symlink:
			return nil, false
		case i == len(parts)-1:
			return entry, true
		case entry.Mode != filemode.Dir:
			return nil, true // a file on the way: nothing there
		}
		if dir, err = t.objects.tree(entry.Hash); err != nil {
			return nil, false
		}
	}
	return nil, false
}

// ErrOutside is returned for a symlink that leads outside the repository.
var ErrOutside = errors.New("leads outside the repository")

type treeNode struct {
	name  string
	path  string            // the real path, symlinks resolved
	tree  *gitTree          // set for directories
	entry *object.TreeEntry // set for files
}

// lookup walks name one component at a time, following symlinks inside the tree.
func (t *treeFS) lookup(op, name string) (*treeNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	root, err := t.objects.tree(t.root.Hash)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if name == "." {
		return &treeNode{name: ".", path: ".", tree: root}, nil
	}
	hops := 0
	parts := strings.Split(name, "/")
	dir := root
	for i := 0; i < len(parts); {
		prefix := strings.Join(parts[:i+1], "/")
		entry, ok := dir.entry(parts[i])
		if !ok {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if entry.Mode == filemode.Symlink {
			hops++
			if hops > maxSymlinkHops {
				return nil, &fs.PathError{Op: op, Path: name, Err: errors.New("too many levels of symbolic links")}
			}
			target, err := t.objects.blob(entry.Hash)
			if err != nil {
				return nil, &fs.PathError{Op: op, Path: name, Err: err}
			}
			dest := string(target)
			if path.IsAbs(dest) {
				return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("symlink %s -> %s %w", prefix, dest, ErrOutside)}
			}
			joined := path.Join(path.Dir(prefix), dest)
			if joined == ".." || strings.HasPrefix(joined, "../") {
				return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("symlink %s -> %s %w", prefix, dest, ErrOutside)}
			}
			rest := parts[i+1:]
			dir, i = root, 0
			if joined == "." {
				parts = rest
				if len(parts) == 0 {
					return &treeNode{name: path.Base(name), path: ".", tree: root}, nil
				}
				continue
			}
			parts = append(strings.Split(joined, "/"), rest...)
			continue
		}
		last := i == len(parts)-1
		if entry.Mode == filemode.Dir {
			sub, err := t.objects.tree(entry.Hash)
			if err != nil {
				return nil, &fs.PathError{Op: op, Path: name, Err: err}
			}
			if last {
				return &treeNode{name: path.Base(name), path: prefix, tree: sub}, nil
			}
			dir = sub
			i++
			continue
		}
		if entry.Mode == filemode.Submodule {
			return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%s is a git submodule (commit %s) and so %w: drift reads only this repository's files; preview the submodule's repository on its own",
				prefix, entry.Hash.String()[:12], ErrNotOwnContent)}
		}
		if !last {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		e := *entry
		return &treeNode{name: path.Base(name), path: prefix, entry: &e}, nil
	}
	return &treeNode{name: ".", path: ".", tree: root}, nil
}

func (t *treeFS) open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.tree != nil {
		entries, err := t.readDirNode(n)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &memDir{info: dirInfo(n.name), entries: entries}, nil
	}
	data, err := t.objects.blob(n.entry.Hash)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{info: fileInfo{name: n.name, size: int64(len(data))}, r: bytes.NewReader(data)}, nil
}

func (t *treeFS) readFile(name string) ([]byte, error) {
	n, err := t.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if n.tree != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return t.objects.blob(n.entry.Hash)
}

func (t *treeFS) stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	if n.tree != nil {
		return dirInfo(n.name), nil
	}
	return fileInfo{name: n.name, size: t.objects.size(n.entry.Hash)}, nil
}

func (t *treeFS) readDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if n.tree == nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	entries, err := t.readDirNode(n)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return entries, nil
}

func (t *treeFS) readDirNode(n *treeNode) ([]fs.DirEntry, error) {
	out := make([]fs.DirEntry, 0, len(n.tree.entries))
	for i := range n.tree.entries {
		e := n.tree.entries[i]
		switch e.Mode {
		case filemode.Dir:
			out = append(out, fs.FileInfoToDirEntry(dirInfo(e.Name)))
		case filemode.Submodule:
			// Listed, so that reading it fails with a message instead of vanishing.
			out = append(out, fs.FileInfoToDirEntry(dirInfo(e.Name)))
		case filemode.Symlink:
			out = append(out, fs.FileInfoToDirEntry(fileInfo{name: e.Name, mode: fs.ModeSymlink}))
		default:
			out = append(out, blobEntry{name: e.Name, hash: e.Hash, objects: t.objects})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// blobEntry is a file in a directory listing. Its size is read when Info asks for
// it: a walk that only needs names and object ids (discovery's scan, answered from
// its memo) reads no blob.
type blobEntry struct {
	name    string
	hash    plumbing.Hash
	objects *gitObjects
}

func (e blobEntry) Name() string      { return e.name }
func (e blobEntry) IsDir() bool       { return false }
func (e blobEntry) Type() fs.FileMode { return 0 }
func (e blobEntry) Info() (fs.FileInfo, error) {
	return fileInfo{name: e.name, size: e.objects.size(e.hash)}, nil
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (f fileInfo) Name() string       { return f.name }
func (f fileInfo) Size() int64        { return f.size }
func (f fileInfo) Mode() fs.FileMode  { return f.mode | 0o444 }
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fileInfo) Sys() any           { return nil }

func dirInfo(name string) fileInfo { return fileInfo{name: name, mode: fs.ModeDir | 0o555} }

type memFile struct {
	info fileInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *memFile) Close() error               { return nil }

type memDir struct {
	info    fileInfo
	entries []fs.DirEntry
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *memDir) Close() error { return nil }
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}

// IsOutside reports whether err says a path is not the repository's own to read: a
// symlink leading outside it (ErrOutside, or os.Root's "path escapes from parent"), or
// .git, an ignored file or a submodule (ErrNotOwnContent). Renderers refuse those.
func IsOutside(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return errors.Is(err, ErrOutside) || errors.Is(err, ErrNotOwnContent) ||
		strings.Contains(msg, ErrOutside.Error()) || strings.Contains(msg, ErrNotOwnContent.Error()) || strings.Contains(msg, "path escapes from parent")
}
