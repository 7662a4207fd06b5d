package source

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// resolve turns anything a user may type (branch, origin/main, tag, full or short
// SHA, HEAD~2, refs/pull/N/merge) into a commit.
func (r *Repo) resolve(ref string) (*object.Commit, error) {
	hash, err := r.git.ResolveRevision(plumbing.Revision(ref))
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, r.unknownRef(ref)
		}
		return nil, fmt.Errorf("failed to resolve ref %q: %w", ref, err)
	}
	commit, err := r.git.CommitObject(*hash)
	if err != nil {
		return nil, fmt.Errorf("ref %q names %s, which is not a commit: %w", ref, hash, err)
	}
	return commit, nil
}

func (r *Repo) unknownRef(ref string) error {
	names := r.refNames()
	close := closeNames(ref, names, 5)
	msg := fmt.Sprintf("unknown ref %q: no branch, tag, remote branch or commit by that name", ref)
	if len(close) > 0 {
		return fmt.Errorf("%s; refs that look close: %s", msg, strings.Join(close, ", "))
	}
	if len(names) == 0 {
		return fmt.Errorf("%s; the repository has no refs yet (commit first, or run without --ref to read the work tree)", msg)
	}
	return fmt.Errorf("%s; fetch it first (e.g. git fetch origin %s) or list refs with git show-ref", msg, ref)
}

// refNames lists short names of every ref: main, origin/main, v1.2.0, pull/7/merge.
func (r *Repo) refNames() []string {
	iter, err := r.git.References()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name()
		if name == plumbing.HEAD {
			return nil
		}
		seen[name.Short()] = true
		return nil
	})
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// closeNames picks up to max names that share a prefix or suffix with want, or lie a
// small edit distance from it, closest first.
func closeNames(want string, names []string, max int) []string {
	type cand struct {
		name string
		dist int
	}
	w := strings.ToLower(strings.TrimPrefix(want, "refs/"))
	var cands []cand
	for _, n := range names {
		l := strings.ToLower(n)
		d := editDistance(w, l)
		switch {
		case strings.HasSuffix(l, "/"+w) || strings.HasSuffix(w, "/"+l):
			d = 0
		case strings.Contains(l, w) || strings.Contains(w, l):
			d = min(d, 1)
		}
		if d <= 2 || d*3 <= len(w) {
			cands = append(cands, cand{n, d})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	out := []string{}
	for i := 0; i < len(cands) && i < max; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DefaultBranch is the branch a scheduled drift check tracks: the remote's default
// branch as origin/HEAD names it ("origin/main"), else HEAD.
func (r *Repo) DefaultBranch() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, err := r.git.Reference(plumbing.ReferenceName("refs/remotes/origin/HEAD"), false)
	if err == nil && ref.Type() == plumbing.SymbolicReference {
		return strings.TrimPrefix(ref.Target().String(), "refs/remotes/")
	}
	return "HEAD"
}

// DefaultBranchName is the name of the branch the remote's HEAD points to (main),
// else of a main or master branch the repository has (remote or local), else "".
func (r *Repo) DefaultBranchName() string {
	if b := r.DefaultBranch(); b != "HEAD" {
		return strings.TrimPrefix(b, "origin/")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range []string{"main", "master"} {
		for _, ref := range []string{"refs/remotes/origin/" + name, "refs/heads/" + name} {
			if _, err := r.git.Reference(plumbing.ReferenceName(ref), false); err == nil {
				return name
			}
		}
	}
	return ""
}

// BranchesAt are the names of the branches whose tip is commit: local branches, and
// the origin remote's without its prefix, sorted.
func (r *Repo) BranchesAt(commit string) []string {
	if commit == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	refs, err := r.git.References()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name().String()
		var short string
		switch {
		case strings.HasPrefix(name, "refs/heads/"):
			short = strings.TrimPrefix(name, "refs/heads/")
		case strings.HasPrefix(name, "refs/remotes/origin/") && name != "refs/remotes/origin/HEAD":
			short = strings.TrimPrefix(name, "refs/remotes/origin/")
		default:
			return nil
		}
		if ref.Type() == plumbing.HashReference && ref.Hash().String() == commit {
			seen[short] = true
		}
		return nil
	})
	out := make([]string, 0, len(seen))
	for b := range seen {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// RemoteURLs are the URLs of the repository's git remotes, in order of their names:
// the URLs Argo CD and Flux objects know this repository by.
func (r *Repo) RemoteURLs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	remotes, err := r.git.Remotes()
	if err != nil {
		return nil
	}
	sort.Slice(remotes, func(i, j int) bool { return remotes[i].Config().Name < remotes[j].Config().Name })
	var out []string
	for _, rm := range remotes {
		out = append(out, rm.Config().URLs...)
	}
	return out
}

// Branches are the names a ref is known by as a branch: the branch HEAD is on when
// ref is "" (the work tree) or HEAD, else ref itself without a remote's prefix.
func (r *Repo) Branches(ref string) []string {
	if ref != "" && ref != "HEAD" {
		if _, name, ok := strings.Cut(ref, "/"); ok && strings.HasPrefix(ref, "origin/") {
			return []string{ref, name}
		}
		return []string{ref}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.git.Reference(plumbing.HEAD, false)
	if err != nil || head.Type() != plumbing.SymbolicReference {
		return nil
	}
	return []string{head.Target().Short()}
}
