package appset

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// matchFiles are the repository's files a git files pattern names, as the
// repo-server lists them: by default `git ls-files -- <pattern>` (a git pathspec,
// whose '*' matches across '/', so "a/*/c.json" and "a/**/c.json" both match
// a/b/d/c.json but not a/c.json); with the new globbing, doublestar's
// FilepathGlob (where "a/**/c.json" matches a/c.json too, and directories match).
func (e *expander) matchFiles(pattern string) ([]string, error) {
	if e.req.NewGitFileGlobbing {
		return e.doublestarFiles(pattern)
	}
	ps, err := parsePathspec(pattern)
	if err != nil {
		return nil, err
	}
	files, err := e.trackedFiles()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if ps.matches(f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// trackedFiles are the files git ls-files would list: every file (symbolic links
// included) but those under .git and those of nested repositories (a submodule's
// files are not its superproject's).
func (e *expander) trackedFiles() ([]string, error) {
	if e.files != nil {
		return e.files, nil
	}
	files := []string{}
	err := fs.WalkDir(e.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := e.ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != "." {
				return fs.SkipDir
			}
			if p != "." {
				if _, err := fs.Stat(e.fsys, path.Join(p, ".git")); err == nil {
					return fs.SkipDir // a submodule or nested repository
				}
			}
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.files = files
	return files, nil
}

// doublestarFiles are what doublestar.FilepathGlob matches under the repository's
// root (the new globbing): files and directories, hidden ones too; a pattern
// reaching out of the repository matches nothing.
func (e *expander) doublestarFiles(pattern string) ([]string, error) {
	if pattern == "" {
		return nil, nil
	}
	p := path.Clean(pattern)
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return nil, nil
	}
	matches, err := doublestar.Glob(e.fsys, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if m == ".git" || strings.HasPrefix(m, ".git/") {
			continue // not in a checkout's files
		}
		out = append(out, m)
	}
	return out, nil
}

// pathspec is a git pathspec without magic, normalized from the repository root.
type pathspec struct {
	match      string // "" matches every file
	nowildcard int    // length of match before its first glob special character
}

// parsePathspec normalizes a pattern as git does for a pathspec given at the
// repository root: "." and ".." components resolved, repeated '/' collapsed, a
// trailing '/' kept. Pathspec magic (":(glob)…", ":!…") is refused.
func parsePathspec(pattern string) (*pathspec, error) {
	if pattern == "" {
		pattern = "."
	}
	if strings.HasPrefix(pattern, ":") {
		return nil, errors.New("pathspec magic is not supported")
	}
	if strings.HasPrefix(pattern, "/") {
		return nil, fmt.Errorf("%s is outside the repository", pattern)
	}
	trailing := strings.HasSuffix(pattern, "/")
	var parts []string
	for _, c := range strings.Split(pattern, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return nil, fmt.Errorf("%s is outside the repository", pattern)
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, c)
		}
	}
	match := strings.Join(parts, "/")
	if trailing && match != "" {
		match += "/"
	}
	n := strings.IndexAny(match, `*?[\`)
	if n < 0 {
		n = len(match)
	}
	return &pathspec{match: match, nowildcard: n}, nil
}

// matches says whether git ls-files lists the file for the pathspec: the pathspec
// is the file, a leading directory of it, or a wildcard pattern matching it whole.
func (ps *pathspec) matches(name string) bool {
	m := ps.match
	if m == "" {
		return true
	}
	if len(m) <= len(name) && name[:len(m)] == m {
		if len(m) == len(name) || m[len(m)-1] == '/' || name[len(m)] == '/' {
			return true
		}
	}
	if ps.nowildcard < len(m) {
		n := ps.nowildcard
		if len(name) < n || name[:n] != m[:n] {
			return false
		}
		return wildmatch(m[n:], name[n:])
	}
	return false
}
