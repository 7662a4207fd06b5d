package resultcache

import (
	"bytes"
	"encoding/hex"
	"errors"
	"hash"
	"io/fs"
	"path"
	"sync"
	"time"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/render/rendercache"
)

// Renders keeps what targets rendered to between runs (rendercache.Store), in packs as
// the dry-run answers are kept (pack.go): a run that keeps renderings writes one
// file, renders/BUILD/TIME-N.pack, holding every rendering it used, those it took
// from the store as well, so that the newest pack alone serves a run like it and
// the oldest can go (a store keeps its build's keptPacks newest). A record is keyed
// by a keyed hash of its render options (options may hold substitution variables
// read from a Secret, which are never written) and holds what rendercache.Cache gives it
// (the git object of every path the rendering read, and the rendering as the render
// worker sends it, each value of its Secrets as its keyed hash, Sum). It is never
// given a rendering that holds a secret otherwise (the run's scrubber decides before
// Keep). A record of another build of drift is no
// record: each build keeps its own directory, and the first pack a build writes
// removes the other builds'.
type Renders struct {
	dir   *cachedir.Dir
	build string // the build's directory name: a hash of its BuildID
	id    string // BuildID, as packs hold it
	keyed sync.Pool
	// sums computes Sum's keyed hashes.
	sums sync.Pool
	mac  *recordMAC
	Now  func() time.Time

	mu     sync.Mutex
	loaded bool
	index  map[[32]byte]location
	packs  []*packFile
	// fromNewest are the records Load read from the newest pack, as it read them.
	fromNewest map[[32]byte][]byte
	pruned     sync.Once
}

// keptPacks is how many packs of its build a store keeps: the runs of a few
// branches side by side each find theirs.
const keptPacks = 8

// OpenRenders is the store of renderings in the cache directory dir, for the drift
// build (BuildID).
func OpenRenders(dir *cachedir.Dir, build string) *Renders {
	r := &Renders{dir: dir, build: hashOf(build)[:16], id: build, mac: newRecordMAC(dir, "rendering", build), Now: time.Now}
	r.keyed.New = func() any { return dir.MAC("render options") }
	r.sums.New = func() any { return dir.MAC("rendered secret") }
	return r
}

// rel is the directory of the build's packs.
func (r *Renders) rel() string { return path.Join(versionDir(), "renders", r.build) }

// digest is the keyed hash of render options spec that names its record.
func (r *Renders) digest(spec []byte) [32]byte {
	m := r.keyed.Get().(hash.Hash)
	defer r.keyed.Put(m)
	m.Reset()
	m.Write(spec)
	var d [32]byte
	copy(d[:], m.Sum(nil))
	return d
}

// Sum is the keyed hash, in hex, a kept rendering holds a Secret's value v as: it
// cannot be confirmed offline without the cache's key.
func (r *Renders) Sum(v string) string {
	m := r.sums.Get().(hash.Hash)
	defer r.sums.Put(m)
	m.Reset()
	m.Write([]byte(v))
	return hex.EncodeToString(m.Sum(nil))
}

// load reads the index of every pack of the build, once: the newest pack's record
// of a digest wins.
func (r *Renders) load() {
	if r.loaded {
		return
	}
	r.loaded, r.index = true, map[[32]byte]location{}
	for _, rel := range packsIn(r.dir, r.rel()) {
		pf, index, err := readPack(r.dir, rel, r.id, r.mac)
		if err != nil {
			continue // another build's, pruned since it was listed, or damaged: no records
		}
		r.packs = append(r.packs, pf)
		for d, loc := range index {
			if _, ok := r.index[d]; !ok {
				r.index[d] = loc
			}
		}
	}
}

// Load is what was kept for spec; ok is false when nothing is (or it is not
// drift's, or not this build's).
func (r *Renders) Load(spec []byte) (data []byte, ok bool) {
	r.mu.Lock()
	r.load()
	d := r.digest(spec)
	loc, ok := r.index[d]
	r.mu.Unlock()
	if !ok {
		return nil, false
	}
	data, err := loc.read(d)
	if err == nil && loc.pack == r.packs[0] {
		r.mu.Lock()
		if r.fromNewest == nil {
			r.fromNewest = map[[32]byte][]byte{}
		}
		r.fromNewest[d] = data
		r.mu.Unlock()
	}
	return data, err == nil
}

// Keep writes the run's pack of records, then removes the build's packs but the
// keptPacks newest and, the first time, the other builds' renderings. Records that
// are all in the newest pack, as Load read them, are not written again: a run that
// only took its renderings does not push the other branches' packs out.
func (r *Renders) Keep(records []rendercache.Record) error {
	r.pruned.Do(r.prune)
	if len(records) == 0 || r.inNewest(records) {
		return nil
	}
	pw, err := newPackWriter(r.dir, r.rel(), r.id, r.mac)
	if err != nil {
		return err
	}
	for _, rec := range records {
		if err := pw.add(r.digest(rec.Spec), rec.Data); err != nil {
			pw.tmp.Close()
			return errors.Join(err, r.dir.Remove(r.rel()+"/"+path.Base(pw.tmp.Name())))
		}
	}
	if err := pw.finish(r.Now()); err != nil {
		return err
	}
	packs := packsIn(r.dir, r.rel())
	if len(packs) > keptPacks {
		p := &pruner{dir: r.dir}
		for _, rel := range packs[keptPacks:] {
			p.remove(rel) // open packs are still read: a removed file stays until closed
		}
	}
	return nil
}

// inNewest says whether Load read each of records, as it is, from the newest pack.
func (r *Renders) inNewest(records []rendercache.Record) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range records {
		if read, ok := r.fromNewest[r.digest(rec.Spec)]; !ok || !bytes.Equal(read, rec.Data) {
			return false
		}
	}
	return true
}

// Close closes the packs read. The store is not used after.
func (r *Renders) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pf := range r.packs {
		pf.f.Close()
	}
	r.packs, r.index = nil, nil
	return nil
}

// prune removes the records of other builds of drift, as drift cache prune
// removes files: only those of drift's names, never through a link.
func (r *Renders) prune() {
	p := &pruner{dir: r.dir}
	p.removeRenders(versionDir(), r.build, func(string, fs.FileInfo) bool { return true })
}
