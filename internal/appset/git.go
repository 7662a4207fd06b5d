package appset

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// gitSpec is a git generator's spec.
type gitSpec struct {
	RepoURL         string
	Revision        string
	PathParamPrefix string
	Directories     []pathItem
	Files           []pathItem
	Values          map[string]string
}

type pathItem struct {
	Path    string
	Exclude bool
}

func readGitSpec(v any) (*gitSpec, error) {
	m, err := object(v, "git")
	if err != nil {
		return nil, err
	}
	g := &gitSpec{}
	for _, f := range []struct {
		key string
		to  *string
	}{{"repoURL", &g.RepoURL}, {"revision", &g.Revision}, {"pathParamPrefix", &g.PathParamPrefix}} {
		if x, ok := m[f.key]; ok && x != nil {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("git.%s is not a string", f.key)
			}
			*f.to = s
		}
	}
	if g.Directories, err = readPathItems(m["directories"], "directories"); err != nil {
		return nil, err
	}
	if g.Files, err = readPathItems(m["files"], "files"); err != nil {
		return nil, err
	}
	if g.Values, err = stringMap(m["values"]); err != nil {
		return nil, fmt.Errorf("git.values: %w", err)
	}
	return g, nil
}

func readPathItems(v any, what string) ([]pathItem, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("git.%s is not a list", what)
	}
	var out []pathItem
	for i, x := range l {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("git.%s item %d is not an object", what, i+1)
		}
		var it pathItem
		if p, ok := m["path"]; ok && p != nil {
			if it.Path, ok = p.(string); !ok {
				return nil, fmt.Errorf("git.%s item %d: path is not a string", what, i+1)
			}
		}
		if ex, ok := m["exclude"]; ok && ex != nil {
			if it.Exclude, ok = ex.(bool); !ok {
				return nil, fmt.Errorf("git.%s item %d: exclude is not a boolean", what, i+1)
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// gitParams are a git generator's parameter sets, read from the repository
// previewed when the generator reads it, skipped otherwise.
func (e *expander) gitParams(v any) ([]map[string]any, error) {
	g, err := readGitSpec(v)
	if err != nil {
		return nil, err
	}
	if !sameRepo(g.RepoURL, e.req.RepoURLs) {
		return nil, skipf("reads repository %s, not the one previewed", g.RepoURL)
	}
	if !e.previewedRevision(g.Revision) {
		return nil, skipf("reads revision %s of the repository, not the one previewed", g.Revision)
	}
	r := e.renderer()
	switch {
	case len(g.Directories) > 0:
		return e.gitDirectoryParams(g, r)
	case len(g.Files) > 0:
		return e.gitFileParams(g, r)
	}
	return nil, errors.New("ApplicationSet is empty") // the controller's ErrEmptyAppSetGenerator
}

// previewedRevision says whether a git generator's revision is the ref previewed:
// "", HEAD or one of the Request's revisions (a branch also as refs/heads/<branch>).
func (e *expander) previewedRevision(rev string) bool {
	if rev == "" || rev == "HEAD" {
		return true
	}
	for _, r := range e.req.Revisions {
		if r == rev || strings.TrimPrefix(r, "refs/heads/") == strings.TrimPrefix(rev, "refs/heads/") {
			return true
		}
	}
	return false
}

// gitDirectoryParams are one parameter set per directory of the repository that a
// directories item matches (path.Match) and no exclude item matches.
func (e *expander) gitDirectoryParams(g *gitSpec, r renderer) ([]map[string]any, error) {
	dirs, err := e.directories()
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, dir := range dirs {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		include, exclude := false, false
		for _, it := range g.Directories {
			// A bad pattern matches nothing: the controller logs it and goes on.
			if ok, err := path.Match(it.Path, dir); err == nil && ok {
				if it.Exclude {
					exclude = true
				} else {
					include = true
				}
			}
		}
		if !include || exclude {
			continue
		}
		if len(out) >= e.max {
			return nil, fmt.Errorf("more than %d directories match, "+LimitPhrase+" %d", e.max, e.max)
		}
		params := map[string]any{}
		pathParams(params, dir, "", g.PathParamPrefix, r.goTemplate)
		if err := r.appendValues(g.Values, params); err != nil {
			return nil, fmt.Errorf("directory %s: %w", dir, err)
		}
		out = append(out, params)
	}
	return out, nil
}

// directories are the repository's directories as the repo-server lists them:
// walked in lexical order, without the root and without hidden directories (and
// what they hold).
func (e *expander) directories() ([]string, error) {
	var dirs []string
	err := fs.WalkDir(e.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := e.ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir // unreadable, as a submodule not checked out
			}
			return err
		}
		if !d.IsDir() || p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		dirs = append(dirs, p)
		return nil
	})
	return dirs, err
}

// gitFileParams are the parameter sets of the files that an include item's pattern
// matches and no exclude item's does, in path order: one per file holding an
// object, one per item of a file holding a list.
func (e *expander) gitFileParams(g *gitSpec, r renderer) ([]map[string]any, error) {
	files := map[string]bool{}
	for _, it := range g.Files {
		if it.Exclude {
			continue
		}
		matched, err := e.matchFiles(it.Path)
		if err != nil {
			return nil, fmt.Errorf("files pattern %q: %w", it.Path, err)
		}
		for _, f := range matched {
			files[f] = true
		}
	}
	for _, it := range g.Files {
		if !it.Exclude {
			continue
		}
		matched, err := e.matchFiles(it.Path)
		if err != nil {
			return nil, fmt.Errorf("files pattern %q: %w", it.Path, err)
		}
		for _, f := range matched {
			delete(files, f)
		}
	}
	var out []map[string]any
	for _, f := range sortedKeys(files) {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		data, err := fs.ReadFile(e.fsys, f)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f, err)
		}
		sets, err := fileParams(f, data, g, r)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f, err)
		}
		if len(out)+len(sets) > e.max {
			return nil, fmt.Errorf("the files matched give "+LimitPhrase+" %d parameter sets", e.max)
		}
		out = append(out, sets...)
	}
	return out, nil
}

// fileParams are the parameter sets of one git file: its content (an object, or a
// list of objects), flattened without goTemplate, with the path parameters and the
// values.
func fileParams(file string, data []byte, g *gitSpec, r renderer) ([]map[string]any, error) {
	var objects []map[string]any
	single := map[string]any{}
	if err := yaml.Unmarshal(data, &single); err == nil {
		objects = append(objects, single)
	} else if err := yaml.Unmarshal(data, &objects); err != nil {
		return nil, fmt.Errorf("not a YAML or JSON object or list of objects: %w", err)
	}
	var out []map[string]any
	for _, obj := range objects {
		params := map[string]any{}
		if r.goTemplate {
			for k, v := range obj {
				params[k] = v
			}
		} else {
			for k, v := range flatten(obj) {
				params[k] = fmt.Sprintf("%v", v)
			}
		}
		pathParams(params, path.Dir(file), file, g.PathParamPrefix, r.goTemplate)
		if err := r.appendValues(g.Values, params); err != nil {
			return nil, err
		}
		out = append(out, params)
	}
	return out, nil
}
