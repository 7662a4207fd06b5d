package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// hashes maps every file of the snapshot to its git blob hash.
func (s *Snapshot) hashes() (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	if t, ok := s.FS.(*treeFS); ok {
		t.objects.mu.Lock()
		defer t.objects.mu.Unlock()
		walker := object.NewTreeWalker(t.root, true, nil)
		defer walker.Close()
		for {
			name, entry, err := walker.Next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			if entry.Mode == filemode.Dir || entry.Mode == filemode.Submodule {
				continue
			}
			out[name] = entry.Hash
		}
	}
	err := fs.WalkDir(s.FS, ".", func(name string, d fs.DirEntry, err error) error {
		if errors.Is(err, ErrNotOwnContent) {
			// A nested repository: not read, so a change counts it by name.
			out[name] = plumbing.ComputeHash(plumbing.BlobObject, []byte("not read:"+name))
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := readLinkOrFile(s.FS, name, d)
		if err != nil {
			return err
		}
		out[name] = plumbing.ComputeHash(plumbing.BlobObject, data)
		return nil
	})
	return out, err
}

// readLinkOrFile reads a file, or a symlink's target text as git stores it.
func readLinkOrFile(fsys fs.FS, name string, d fs.DirEntry) ([]byte, error) {
	if d.Type()&fs.ModeSymlink != 0 {
		if rl, ok := fsys.(interface{ ReadLink(string) (string, error) }); ok {
			target, err := rl.ReadLink(name)
			return []byte(target), err
		}
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		// A dangling or escaping link is a change only through its text, which the
		// work tree cannot give here; count it by name.
		return []byte("unreadable:" + name), nil
	}
	return data, nil
}

// FileChange is one file a change touches: added, removed or modified, or renamed
// (From is then its path in the base: the same content under another path).
type FileChange struct {
	Path string
	// From is the base's path of a file the change renames ("": not renamed).
	From string
	// Removed says the head no longer has the file (Path is then the base's).
	Removed bool
}

// Files returns the files the change from base to head touches, by path: every
// added, removed or modified file, and a file removed in one place and added with
// the same content in another as one rename. Renames are paired by content in
// path order, so the list is the same on every run.
func Files(base, head *Snapshot) ([]FileChange, error) {
	a, err := base.hashes()
	if err != nil {
		return nil, fmt.Errorf("failed to list the files of %s: %w", base.Describe(), err)
	}
	b, err := head.hashes()
	if err != nil {
		return nil, fmt.Errorf("failed to list the files of %s: %w", head.Describe(), err)
	}
	removed := map[plumbing.Hash][]string{}
	var gone []string
	for p := range a {
		if _, ok := b[p]; !ok {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone)
	for _, p := range gone {
		removed[a[p]] = append(removed[a[p]], p)
	}
	renamed := map[string]bool{}
	var out []FileChange
	var added []string
	for p, h := range b {
		old, ok := a[p]
		switch {
		case !ok:
			added = append(added, p)
		case old != h:
			out = append(out, FileChange{Path: p})
		}
	}
	sort.Strings(added)
	for _, p := range added {
		c := FileChange{Path: p}
		if from := removed[b[p]]; len(from) > 0 {
			c.From, removed[b[p]] = from[0], from[1:]
			renamed[c.From] = true
		}
		out = append(out, c)
	}
	for _, p := range gone {
		if !renamed[p] {
			out = append(out, FileChange{Path: p, Removed: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
