package resultcache

import (
	"bytes"
	"encoding/hex"
	"hash"
	"io/fs"
	"path"
	"sync"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// Renders keeps what targets rendered to between runs (render.Store): one file per
// render options, named by a keyed hash of them (options may hold substitution
// variables read from a Secret, which are never written), holding what render.Cache
// gives it (the git object of every path the rendering read, and the rendering as
// the render worker sends it). It is never given a rendering that holds a Secret's
// value (the run's scrubber decides before Keep). A record of another build of
// drift is no record: each build keeps its own directory, and the first record a
// build writes removes the other builds'.
type Renders struct {
	dir   *cachedir.Dir
	build string
	pool  sync.Pool

	pruned sync.Once
}

// rendersMagic starts a record.
const rendersMagic = "drift-render 2\n"

// OpenRenders is the store of renderings in the cache directory dir, for the drift
// build (BuildID).
func OpenRenders(dir *cachedir.Dir, build string) *Renders {
	r := &Renders{dir: dir, build: hashOf(build)[:16]}
	r.pool.New = func() any { return dir.MAC("render options") }
	return r
}

// record is the file of the render options spec: renders/BUILD/XX/MAC.
func (r *Renders) record(spec []byte) string {
	m := r.pool.Get().(hash.Hash)
	defer r.pool.Put(m)
	m.Reset()
	m.Write(spec)
	sum := hex.EncodeToString(m.Sum(nil))
	return path.Join(versionDir(), "renders", r.build, sum[:2], sum)
}

// Load is what was kept for spec; ok is false when nothing is (or it is not
// drift's, or not this build's).
func (r *Renders) Load(spec []byte) (data []byte, ok bool) {
	raw, err := r.dir.ReadSealed(r.record(spec))
	if err != nil {
		return nil, false
	}
	rest, isRecord := bytes.CutPrefix(raw, []byte(rendersMagic))
	return rest, isRecord
}

// Keep keeps data for spec, for the next runs.
func (r *Renders) Keep(spec []byte, data []byte) error {
	r.pruned.Do(r.prune)
	return r.dir.WriteSealed(r.record(spec), append([]byte(rendersMagic), data...))
}

// prune removes the records of other builds of drift, as drift cache prune
// removes files: only those of drift's names, never through a link.
func (r *Renders) prune() {
	p := &pruner{dir: r.dir}
	p.removeRenders(versionDir(), r.build, func(string, fs.FileInfo) bool { return true })
}
