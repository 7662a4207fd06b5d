package resultcache

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"time"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// drift's names in the dry-run cache, of every format it wrote: a version's
// directory (v1, v2, ...), and in it packs and temporary files, the clusters' and
// repositories' records, the clusters' API discovery, and format 1's answers in
// directories of two hex digits. Prune removes nothing else.
var (
	versionName = regexp.MustCompile(`^v[0-9]{1,4}$`)
	// ownFiles are the names of files drift writes in a directory of a version
	// ("" the version's directory itself), by that directory's name.
	ownFiles = map[string]*regexp.Regexp{
		"":         regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9]{20}-[0-9]+\.pack)$`),
		"clusters": regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9a-f]{64}\.json)$`),
		// apis/: each cluster's API discovery (apis.go).
		"apis":   regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9a-f]{64}\.json)$`),
		"scans":  regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9a-f]{32}\.txt)$`),
		"fanout": regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9a-f]{64}\.json)$`),
		// renders/BUILD/: the packs of a build's renderings (renders.go).
		"renders": regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9]{20}-[0-9]+\.pack)$`),
		// renders/BUILD/XX/: a build's renderings as drift kept them before packs,
		// one file each.
		"renders-fanout": regexp.MustCompile(`^(\.tmp-[0-9]+|[0-9a-f]{64})$`),
	}
	fanoutName = regexp.MustCompile(`^[0-9a-f]{2}$`)
	buildName  = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// Prune deletes the packs of the dry-run cache dir, oldest first, until it takes at
// most maxBytes and holds the packs of at most keepRuns runs (0: any number), and
// what no drift of this format reads: other formats' files and the leftovers of runs
// that died while writing. A run writes every answer it used to its own pack, so the
// oldest packs hold the answers used least recently. It removes only regular files
// with the names drift gives them, never through a symbolic link (cachedir), and
// directories it emptied; anything else is left where it is. It returns how many
// files it removed and their size.
func Prune(dir *cachedir.Dir, maxBytes int64, keepRuns int) (removed int, freed int64, err error) {
	entries, err := dir.ReadDir(".")
	if err != nil {
		if isNotExist(err) {
			return 0, 0, nil
		}
		return 0, 0, err
	}
	p := &pruner{dir: dir}
	current := versionDir()
	for _, e := range entries {
		if e.Name() != current && e.IsDir() && versionName.MatchString(e.Name()) {
			// Another format's answers: never read again.
			p.removeVersion(e.Name(), func(string, fs.FileInfo) bool { return true })
		}
	}
	// The leftovers of runs that died while writing.
	p.removeVersion(current, func(name string, info fs.FileInfo) bool {
		return isTemp(name) && time.Since(info.ModTime()) > staleTemp
	})
	total := Size(dir)
	packs := packsIn(dir, current)
	slices.Reverse(packs) // oldest first
	for i, rel := range packs {
		if total <= maxBytes && (keepRuns <= 0 || len(packs)-i <= keepRuns) {
			continue
		}
		if size, ok := p.remove(rel); ok {
			total -= size
		}
	}
	// Still too large with no answer left: the renderings, what discovery read (the
	// next run reads every file again), the clusters' API discovery (the next run
	// asks the server), then the clusters' records (the next run on a cluster waits
	// Settle before it stores again).
	for _, sub := range []string{"renders", "scans", "apis", "clusters"} {
		if total <= maxBytes {
			break
		}
		before := p.freed
		if sub == "renders" {
			p.removeRenders(current, "", func(string, fs.FileInfo) bool { return true })
		} else {
			p.removeIn(current+"/"+sub, ownFiles[sub], func(string, fs.FileInfo) bool { return true })
		}
		total -= p.freed - before
	}
	return p.removed, p.freed, p.err
}

// pruner removes drift's files from a dry-run cache and counts them.
type pruner struct {
	dir     *cachedir.Dir
	removed int
	freed   int64
	err     error
}

// removeVersion removes the files of the version's directory v that drift wrote and
// that match, and the directories left empty.
func (p *pruner) removeVersion(v string, match func(string, fs.FileInfo) bool) {
	entries, _ := p.dir.ReadDir(v)
	for _, e := range entries {
		switch {
		case !e.IsDir():
		case e.Name() == "clusters" || e.Name() == "scans" || e.Name() == "apis":
			p.removeIn(v+"/"+e.Name(), ownFiles[e.Name()], match)
		case e.Name() == "renders":
			p.removeRenders(v, "", match)
		case fanoutName.MatchString(e.Name()):
			p.removeIn(v+"/"+e.Name(), ownFiles["fanout"], match)
		}
	}
	p.removeIn(v, ownFiles[""], match)
}

// removeRenders removes the renderings (renders/BUILD/, and renders/BUILD/XX/ as
// drift kept them before packs) of the version's directory v that drift wrote and
// that match, of every build but keep, and the directories left empty.
func (p *pruner) removeRenders(v, keep string, match func(string, fs.FileInfo) bool) {
	base := v + "/renders"
	builds, err := p.dir.ReadDir(base)
	if err != nil {
		return
	}
	for _, b := range builds {
		if !b.IsDir() || !buildName.MatchString(b.Name()) || b.Name() == keep {
			continue
		}
		fanout, _ := p.dir.ReadDir(base + "/" + b.Name())
		for _, f := range fanout {
			if f.IsDir() && fanoutName.MatchString(f.Name()) {
				p.removeIn(base+"/"+b.Name()+"/"+f.Name(), ownFiles["renders-fanout"], match)
			}
		}
		p.removeIn(base+"/"+b.Name(), ownFiles["renders"], match)
	}
	_ = p.dir.Remove(base)
}

// removeIn removes the regular files of the directory rel whose names are drift's
// (names) and that match, then the directory if that emptied it.
func (p *pruner) removeIn(rel string, names *regexp.Regexp, match func(string, fs.FileInfo) bool) {
	entries, err := p.dir.ReadDir(rel)
	if err != nil {
		return
	}
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.Type().IsRegular() || !names.MatchString(e.Name()) || !match(e.Name(), info) {
			continue
		}
		if _, ok := p.remove(rel + "/" + e.Name()); ok {
			n++
		}
	}
	if n == len(entries) && rel != versionDir() {
		_ = p.dir.Remove(rel) // emptied: fails harmlessly when something else is there
	}
}

// remove removes the file rel, and counts it.
func (p *pruner) remove(rel string) (int64, bool) {
	info, err := p.dir.Stat(rel)
	if err != nil {
		return 0, false
	}
	if err := p.dir.Remove(rel); err != nil {
		if p.err == nil && !isNotExist(err) {
			p.err = fmt.Errorf("%s: %w", p.dir.Join(rel), err)
		}
		return 0, false
	}
	p.removed, p.freed = p.removed+1, p.freed+info.Size()
	return info.Size(), true
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// isTemp reports whether name is a temporary file's.
func isTemp(name string) bool { return len(name) > 5 && name[:5] == ".tmp-" }

// Size is the size of the regular files of the cache dir, in bytes; what a symbolic
// link points to is not counted.
func Size(dir *cachedir.Dir) int64 {
	var n int64
	var walk func(rel string)
	walk = func(rel string) {
		entries, err := dir.ReadDir(rel)
		if err != nil {
			return
		}
		for _, e := range entries {
			sub := e.Name()
			if rel != "." {
				sub = rel + "/" + sub
			}
			switch {
			case e.IsDir():
				walk(sub)
			case e.Type().IsRegular():
				if info, err := e.Info(); err == nil {
					n += info.Size()
				}
			}
		}
	}
	walk(".")
	return n
}
