// Package cachedir is drift's cache directory: where drift keeps what it downloads,
// builds or learns once (charts, the ephemeral server's binaries, dry-run answers,
// what discovery read), and the one way drift reads and writes there. A Dir is opened
// checked to be drift's own (outside the repository a run reads, not a symbolic link,
// owned by the user running drift), every file in it is reached the same way, and
// what drift reads back it can verify it wrote: a key kept outside the directory
// seals records and MACs answers, so an entry anyone else wrote is a miss.
package cachedir

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Path is elem under drift's cache directory: $DRIFT_CACHE_DIR, else
// $XDG_CACHE_HOME/drift, else ~/.cache/drift.
func Path(getenv func(string) string, elem ...string) string {
	base := getenv("DRIFT_CACHE_DIR")
	if base == "" {
		if xdg := getenv("XDG_CACHE_HOME"); xdg != "" {
			base = filepath.Join(xdg, "drift")
		} else if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".cache", "drift")
		}
	}
	return filepath.Join(append([]string{base}, elem...)...)
}

// KeyEnv names the file holding the cache's key, when it is not the default (the
// cache directory's path with ".key" added: beside the directory, not in it).
const KeyEnv = "DRIFT_CACHE_KEY_FILE"

// KeyPath is the file holding the key of the cache directory dir.
func KeyPath(getenv func(string) string, dir string) string {
	if p := getenv(KeyEnv); p != "" {
		return p
	}
	return filepath.Clean(dir) + ".key"
}

// Dir is drift's cache directory, or a directory of it, as a run uses it. Its methods
// take paths relative to it, with '/' between elements.
type Dir struct {
	path string
	key  []byte
}

// Options say how a cache directory is opened.
type Options struct {
	// Getenv reads DRIFT_CACHE_DIR, XDG_CACHE_HOME and DRIFT_CACHE_KEY_FILE.
	Getenv func(string) string
	// Repository is the work tree of the repository the run reads ("": none): neither
	// the directory nor its key may be inside it, since a change could commit them.
	Repository string
}

// Refused is a cache directory, or a file of it, that drift will not use, and why.
type Refused struct {
	Path, Why string
}

func (e *Refused) Error() string {
	return fmt.Sprintf("drift's cache %s %s", e.Path, e.Why)
}

// Open opens drift's cache directory (Path), creating it when it is missing, and
// reads its key (KeyPath), creating it on first use. It refuses a directory or key
// inside the repository, a symbolic link, or one not owned by the user running drift.
func Open(opts Options) (*Dir, error) {
	path, err := filepath.Abs(Path(opts.Getenv))
	if err != nil {
		return nil, err
	}
	keyPath, err := filepath.Abs(KeyPath(opts.Getenv, path))
	if err != nil {
		return nil, err
	}
	if opts.Repository != "" {
		for _, p := range []string{path, keyPath} {
			if inside(p, opts.Repository) {
				return nil, &Refused{Path: p, Why: fmt.Sprintf("is inside the repository being previewed (%s): a change could commit what drift would read as its own state; set DRIFT_CACHE_DIR (and %s) to a directory outside it", opts.Repository, KeyEnv)}
			}
		}
	}
	if inside(keyPath, path) {
		return nil, &Refused{Path: keyPath, Why: fmt.Sprintf("(the key, %s) is inside the cache directory %s: it must be kept outside it", KeyEnv, path)}
	}
	if err := mkdirOwn(path); err != nil {
		return nil, err
	}
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	return &Dir{path: path, key: key}, nil
}

// mkdirOwn makes dir (and its missing parents) for drift alone, or checks that it is
// drift's own.
func mkdirOwn(dir string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("failed to create drift's cache directory: %w", err)
		}
		info, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	return own(dir, info, true)
}

// own checks that info (of path) is drift's: not a symbolic link, a directory or a
// regular file as dir says, owned by the user running drift.
func own(path string, info fs.FileInfo, dir bool) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return &Refused{Path: path, Why: "is a symbolic link: drift follows none in its cache"}
	case dir && !info.IsDir():
		return &Refused{Path: path, Why: "is not a directory"}
	case !dir && !info.Mode().IsRegular():
		return &Refused{Path: path, Why: "is not a regular file"}
	}
	if !ownedByMe(info) {
		return &Refused{Path: path, Why: "is not owned by the user running drift: drift reads only what it wrote"}
	}
	return nil
}

// inside reports whether path is dir or under it, both as given and with their
// symbolic links resolved (as far as they exist).
func inside(path, dir string) bool {
	if within(path, dir) {
		return true
	}
	return within(resolve(path), resolve(dir))
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolve is path with the symbolic links of its longest existing prefix resolved.
func resolve(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for p := path; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// Path is the directory's path, for messages.
func (d *Dir) Path() string { return d.path }

// Join is the path of rel under the directory, for messages and for programs that
// read a file drift verified (a chart's archive).
func (d *Dir) Join(rel string) string { return filepath.Join(d.path, filepath.FromSlash(rel)) }

// Sub is the directory rel under d, with d's key; it need not exist yet.
func (d *Dir) Sub(rel string) *Dir {
	return &Dir{path: d.Join(rel), key: d.key}
}

// elems are rel's elements; an absolute path, "..", "." or an empty element is
// refused, so that no path leaves the directory.
func elems(rel string) ([]string, error) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsRune(p, filepath.Separator) {
			return nil, fmt.Errorf("%q is not a path inside drift's cache", rel)
		}
	}
	return parts, nil
}

// walk checks the directory itself and every directory on the way to rel that
// exists, and returns rel's path. With create, missing directories are made.
func (d *Dir) walk(rel string, create bool) (string, error) {
	parts, err := elems(rel)
	if err != nil {
		return "", err
	}
	p := d.path
	for i, part := range append([]string{""}, parts[:len(parts)-1]...) {
		if i > 0 {
			p = filepath.Join(p, part)
		}
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
			info, err = os.Lstat(p)
		}
		if err != nil {
			return "", err
		}
		if err := own(p, info, true); err != nil {
			return "", err
		}
	}
	return filepath.Join(p, parts[len(parts)-1]), nil
}

// Open opens the file rel for reading: every directory on its way and the file itself
// checked to be drift's own (never through a symbolic link).
func (d *Dir) Open(rel string) (*os.File, error) {
	p, err := d.walk(rel, false)
	if err != nil {
		return nil, err
	}
	f, err := openNoFollow(p)
	if err != nil {
		if isLoop(err) {
			return nil, &Refused{Path: p, Why: "is a symbolic link: drift follows none in its cache"}
		}
		return nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = own(p, info, false)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the file rel (Open).
func (d *Dir) ReadFile(rel string) ([]byte, error) {
	f, err := d.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Stat is the file or directory rel, checked to be drift's own.
func (d *Dir) Stat(rel string) (fs.FileInfo, error) {
	p, err := d.walk(rel, false)
	if err != nil {
		return nil, err
	}
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	return info, own(p, info, info.IsDir())
}

// MkdirAll makes the directory rel ("." the directory itself) and its missing
// parents, for drift alone.
func (d *Dir) MkdirAll(rel string) error {
	if err := mkdirOwn(d.path); err != nil || rel == "." {
		return err
	}
	_, err := d.walk(rel+"/x", true)
	return err
}

// CreateTemp creates a new file in the directory dir (made when missing) whose name
// starts with prefix, for drift to write and then Rename into place.
func (d *Dir) CreateTemp(dir, prefix string) (*os.File, error) {
	if err := mkdirOwn(d.path); err != nil {
		return nil, err
	}
	rel := prefix + "x"
	if dir != "." {
		rel = dir + "/" + rel
	}
	p, err := d.walk(rel, true)
	if err != nil {
		return nil, err
	}
	return os.CreateTemp(filepath.Dir(p), prefix+"*")
}

// Rename moves a file CreateTemp made to rel, replacing what is there (a symbolic
// link there is replaced, never followed).
func (d *Dir) Rename(tmp, rel string) error {
	p, err := d.walk(rel, true)
	if err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// WriteFile writes data to rel whole: a temporary file renamed into place, so that
// runs side by side never read half of it. The directories on the way are checked
// (and made) once, for both.
func (d *Dir) WriteFile(rel string, data []byte) error {
	if err := mkdirOwn(d.path); err != nil {
		return err
	}
	p, err := d.walk(rel, true)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// ReadDir lists the directory rel (the directory itself when rel is "."), checked to
// be drift's own; the entries are as they are (a caller reads only its own names,
// through Open).
func (d *Dir) ReadDir(rel string) ([]fs.DirEntry, error) {
	p := d.path
	if rel != "." {
		var err error
		if p, err = d.walk(rel, false); err != nil {
			return nil, err
		}
	}
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if err := own(p, info, true); err != nil {
		return nil, err
	}
	return os.ReadDir(p)
}

// Remove removes the file rel when it is a regular file of drift's own (never what a
// symbolic link points to, never a directory with something in it): drift removes
// only what it wrote.
func (d *Dir) Remove(rel string) error {
	p, err := d.walk(rel, false)
	if err != nil {
		return err
	}
	info, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if err := own(p, info, info.IsDir()); err != nil {
		return err
	}
	return os.Remove(p)
}

// MAC is a keyed hash for purpose (its own key, derived from the cache's), so that
// what drift wrote can be told from what anyone else did.
func (d *Dir) MAC(purpose string) hash.Hash {
	sub := hmac.New(sha256.New, d.key)
	sub.Write([]byte("drift cache " + purpose))
	return hmac.New(sha256.New, sub.Sum(nil))
}

// Temp is a cache directory of one run's own, with a key of its own, under the
// system's temporary directory: for a run whose cache directory cannot be written
// (nothing is kept for the next run). remove removes it.
func Temp() (d *Dir, remove func(), err error) {
	tmp, err := os.MkdirTemp("", "drift-cache-")
	if err != nil {
		return nil, nil, err
	}
	remove = func() { os.RemoveAll(tmp) }
	path := filepath.Join(tmp, "cache")
	if err := mkdirOwn(path); err != nil {
		remove()
		return nil, nil, err
	}
	key, err := readKey(filepath.Join(tmp, "cache.key"))
	if err != nil {
		remove()
		return nil, nil, err
	}
	return &Dir{path: path, key: key}, remove, nil
}
