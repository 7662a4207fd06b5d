package render

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errReadOnly is returned for every write kustomize attempts; building never writes.
var errReadOnly = errors.New("the repository is read-only to drift")

// kustFS shows kustomize a read-only repository at "/": "/apps/base" is the
// repository's apps/base. It reads through the snapshot's fs.FS, so it never sees a
// file outside the repository, and it records every file and directory kustomize
// reads, which are the target's inputs. Files in overrides replace the repository's.
type kustFS struct {
	fsys      fs.FS
	overrides map[string][]byte

	mu    sync.Mutex
	files map[string]bool
	dirs  map[string]bool
}

var _ filesys.FileSystem = (*kustFS)(nil)

func newKustFS(fsys fs.FS) *kustFS {
	return &kustFS{fsys: fsys, overrides: map[string][]byte{}, files: map[string]bool{}, dirs: map[string]bool{}}
}

// name turns kustomize's absolute path into an fs.FS name ("." for the root). Paths
// are clean by the time they get here, so ".." cannot climb above the root: the
// preflight check refuses entries that would.
func (k *kustFS) name(p string) string {
	p = filepath.ToSlash(p)
	if !path.IsAbs(p) {
		p = "/" + p
	}
	p = strings.TrimPrefix(path.Clean(p), "/")
	if p == "" {
		return "."
	}
	return p
}

func (k *kustFS) record(name string, dir bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if dir {
		k.dirs[name] = true
	} else {
		k.files[name] = true
	}
}

// inputs returns the files and directories read so far, sorted.
func (k *kustFS) inputs() (files, dirs []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for f := range k.files {
		files = append(files, f)
	}
	for d := range k.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(files)
	sort.Strings(dirs)
	return files, dirs
}

// stat probes a path; a probe counts as an input, since a file appearing there
// would change the build.
func (k *kustFS) stat(name string) (fs.FileInfo, error) {
	k.record(name, false)
	if data, ok := k.overrides[name]; ok {
		return memInfo{name: path.Base(name), size: int64(len(data))}, nil
	}
	return fs.Stat(k.fsys, name)
}

func (k *kustFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (k *kustFS) Mkdir(string) error                  { return errReadOnly }
func (k *kustFS) MkdirAll(string) error               { return errReadOnly }
func (k *kustFS) RemoveAll(string) error              { return errReadOnly }
func (k *kustFS) WriteFile(string, []byte) error      { return errReadOnly }

func (k *kustFS) Open(p string) (filesys.File, error) {
	data, err := k.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(data), info: memInfo{name: path.Base(p), size: int64(len(data))}}, nil
}

func (k *kustFS) IsDir(p string) bool {
	info, err := k.stat(k.name(p))
	return err == nil && info.IsDir()
}

func (k *kustFS) ReadDir(p string) ([]string, error) {
	name := k.name(p)
	entries, err := fs.ReadDir(k.fsys, name)
	if err != nil {
		return nil, err
	}
	k.record(name, true)
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}

func (k *kustFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	name := k.name(p)
	info, err := k.stat(name)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", displayName(name), err)
	}
	abs := "/" + strings.TrimPrefix(name, ".")
	if name == "." {
		abs = "/"
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(abs), "", nil
	}
	return filesys.ConfirmedDir(path.Dir(abs)), path.Base(abs), nil
}

func (k *kustFS) Exists(p string) bool {
	_, err := k.stat(k.name(p))
	return err == nil
}

func (k *kustFS) Glob(pattern string) ([]string, error) {
	matches, err := fs.Glob(k.fsys, k.name(pattern))
	if err != nil {
		return nil, err
	}
	k.record(k.name(path.Dir(filepath.ToSlash(pattern))), true)
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		if filesys.IsHiddenFilePath(m) && !filesys.IsHiddenFilePath(pattern) {
			continue
		}
		out = append(out, "/"+m)
	}
	return out, nil
}

func (k *kustFS) ReadFile(p string) ([]byte, error) {
	name := k.name(p)
	k.record(name, false)
	if data, ok := k.overrides[name]; ok {
		return append([]byte(nil), data...), nil
	}
	info, err := fs.Stat(k.fsys, name)
	if err != nil {
		return nil, err
	}
	if info.Size() > DefaultMaxFileBytes {
		return nil, fmt.Errorf("%s is %s, over the %s limit", name, SizeOf(info.Size()), size(DefaultMaxFileBytes))
	}
	return fs.ReadFile(k.fsys, name)
}

func (k *kustFS) Walk(p string, walkFn filepath.WalkFunc) error {
	root := k.name(p)
	return fs.WalkDir(k.fsys, root, func(name string, d fs.DirEntry, err error) error {
		abs := "/" + name
		if name == "." {
			abs = "/"
		}
		if err != nil {
			return walkFn(abs, nil, err)
		}
		info, err := d.Info()
		if err != nil {
			return walkFn(abs, nil, err)
		}
		if d.IsDir() {
			k.record(name, true)
		} else {
			k.record(name, false)
		}
		return walkFn(abs, info, nil)
	})
}

func displayName(name string) string {
	if name == "." {
		return "the repository root"
	}
	return name
}

type memInfo struct {
	name string
	size int64
}

func (m memInfo) Name() string       { return m.name }
func (m memInfo) Size() int64        { return m.size }
func (m memInfo) Mode() fs.FileMode  { return 0o444 }
func (m memInfo) ModTime() time.Time { return time.Time{} }
func (m memInfo) IsDir() bool        { return false }
func (m memInfo) Sys() any           { return nil }

type memFile struct {
	*bytes.Reader
	info memInfo
}

func (f *memFile) Write([]byte) (int, error)  { return 0, errReadOnly }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (os.FileInfo, error) { return f.info, nil }
