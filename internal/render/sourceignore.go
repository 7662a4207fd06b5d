package render

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
)

// Flux's source-controller leaves files out of the artifact kustomize-controller
// builds: its default exclusions (version control, CI, images and archives, SOPS and
// goreleaser files), the patterns of every .sourceignore file in the repository (each
// scoped to its directory), and the GitRepository's spec.ignore. A file left out does
// not exist for the build: a generated kustomization does not list it, and a
// kustomization that names it fails, as in Flux.

// sourceFS is fsys as Flux's artifact holds it.
type sourceFS struct {
	fs.FS
	m gitignore.Matcher
	// excludes are the exclude patterns of the ArtifactGenerator copies that make an
	// ExternalArtifact of the repository.
	excludes []ArtifactExclude
}

// ArtifactExclude is the exclude patterns of an ArtifactGenerator's copy of a
// directory's tree (source-watcher): a file under Base, the copy's source directory,
// that one matches is not in the ExternalArtifact.
type ArtifactExclude struct {
	Base     string
	Patterns []string
}

// excludes tells whether source-watcher leaves the repository file out of the copy:
// a pattern matches the file's path from the source's root, its path from Base, or,
// for a pattern without a slash, its name (its shouldExcludePath).
func (e ArtifactExclude) excludes(file string) bool {
	rel, ok := strings.CutPrefix(file, e.Base+"/")
	if !ok {
		return false
	}
	for _, p := range e.Patterns {
		if doublestar.MatchUnvalidated(p, file) || doublestar.MatchUnvalidated(p, rel) ||
			!strings.Contains(p, "/") && doublestar.MatchUnvalidated(p, path.Base(file)) {
			return true
		}
	}
	return false
}

// fluxSource filters fsys as source-controller filters the artifact; extra is the
// GitRepository's spec.ignore.
func fluxSource(fsys fs.FS, extra string, excludes ...ArtifactExclude) fs.FS {
	ps := slices.Clip(repositoryIgnores(fsys))
	if extra != "" {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(extra), nil)...)
	}
	return sourceFS{FS: fsys, m: sourceignore.NewDefaultMatcher(ps, nil), excludes: excludes}
}

// ignoresOf are the .sourceignore patterns of the commits' trees a process has read
// (loadSourceIgnore over the whole tree), by the tree's git object id: a session
// worker renders many Flux targets of one commit, and walking its every directory
// for each cost as much as a sixth of rendering a home lab's Kustomization.
var ignoresOf = struct {
	sync.Mutex
	m map[string][]gitignore.Pattern
}{m: map[string][]gitignore.Pattern{}}

// treeIdentified is a file system of a commit's tree (source's), which its git
// object id names: its files never change.
type treeIdentified interface {
	TreeID() string
}

// repositoryIgnores are the patterns of every .sourceignore file of fsys, read once
// per tree of a commit, and every time otherwise (the work tree).
func repositoryIgnores(fsys fs.FS) []gitignore.Pattern {
	t, ok := fsys.(treeIdentified)
	if !ok {
		return loadSourceIgnore(fsys, ".", nil)
	}
	id := t.TreeID()
	ignoresOf.Lock()
	defer ignoresOf.Unlock()
	ps, ok := ignoresOf.m[id]
	if !ok {
		if len(ignoresOf.m) >= 8 {
			clear(ignoresOf.m) // a process reads a few commits: never many kept
		}
		ps = loadSourceIgnore(fsys, ".", nil)
		ignoresOf.m[id] = ps
	}
	return ps
}

// loadSourceIgnore reads the .sourceignore files of dir and below, each scoped to
// its directory (sourceignore.LoadIgnorePatterns over an fs.FS).
func loadSourceIgnore(fsys fs.FS, dir string, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	if data, err := fs.ReadFile(fsys, path.Join(dir, sourceignore.IgnoreFile)); err == nil {
		ps = append(ps, sourceignore.ReadPatterns(bytes.NewReader(data), append([]string(nil), domain...))...)
	}
	entries, _ := fs.ReadDir(fsys, dir)
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			ps = append(ps, loadSourceIgnore(fsys, path.Join(dir, e.Name()), append(append([]string(nil), domain...), e.Name()))...)
		}
	}
	return ps
}

func (s sourceFS) ignored(name string, dir bool) bool {
	if name == "." || name == "" {
		return false
	}
	for _, e := range s.excludes {
		if !dir && e.excludes(name) {
			return true
		}
	}
	return s.m.Match(strings.Split(name, "/"), dir)
}

func (s sourceFS) Open(name string) (fs.File, error) {
	info, err := fs.Stat(s.FS, name)
	if err == nil && s.ignored(name, info.IsDir()) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Join(fs.ErrNotExist, errSourceIgnored)}
	}
	return s.FS.Open(name)
}

func (s sourceFS) Stat(name string) (fs.FileInfo, error) {
	info, err := fs.Stat(s.FS, name)
	if err == nil && s.ignored(name, info.IsDir()) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: errors.Join(fs.ErrNotExist, errSourceIgnored)}
	}
	return info, err
}

func (s sourceFS) ReadFile(name string) ([]byte, error) {
	if _, err := s.Stat(name); err != nil {
		return nil, err
	}
	return fs.ReadFile(s.FS, name)
}

func (s sourceFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if _, err := s.Stat(name); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(s.FS, name)
	var out []fs.DirEntry
	for _, e := range entries {
		if !s.ignored(path.Join(name, e.Name()), e.IsDir()) {
			out = append(out, e)
		}
	}
	return out, err
}

// errSourceIgnored says why a file Flux leaves out is missing.
var errSourceIgnored = errors.New("left out of Flux's artifact by its source ignore rules (.sourceignore, the GitRepository's spec.ignore, Flux's default exclusions, or an ArtifactGenerator copy's exclude)")

// FluxIgnored returns what reports whether Flux's source-controller leaves a file
// of fsys out of every artifact of the repository: its default exclusions and the
// repository's .sourceignore files (not a GitRepository's own spec.ignore).
func FluxIgnored(fsys fs.FS) func(p string) bool {
	s := fluxSource(fsys, "").(sourceFS)
	return func(p string) bool {
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts); i++ {
			if s.ignored(strings.Join(parts[:i], "/"), true) {
				return true
			}
		}
		return s.ignored(p, false)
	}
}
