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

// Changed returns the repository paths whose content differs between two snapshots:
// added, removed or modified files (a symlink counts as its target text). Commits are
// compared by their trees' blob hashes without reading content; the work tree is
// hashed as git would hash it.
func Changed(base, head *Snapshot) ([]string, error) {
	a, err := base.hashes()
	if err != nil {
		return nil, fmt.Errorf("failed to list the files of %s: %w", base.Describe(), err)
	}
	b, err := head.hashes()
	if err != nil {
		return nil, fmt.Errorf("failed to list the files of %s: %w", head.Describe(), err)
	}
	var out []string
	for p, h := range a {
		if b[p] != h {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

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
