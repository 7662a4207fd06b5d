// Package resultcache keeps the answers of dry runs across runs, content-addressed by
// everything that decides an answer, so that a repeat run sends a request only for
// what changed. A key hashes the cluster, the live object's uid and resourceVersion
// (or its absence), the exact bytes sent, the applier (name, field manager, force,
// method), the server's version, the CRD's resourceVersion for a custom resource, the
// admission configuration, who asks and what they may do, and the namespace; an
// entry holds the prediction with every secret string replaced by its hash, restored
// from the object sent or the live one when it is read. Each run writes its answers
// to one pack (pack.go). An entry that cannot be read, of another format or build, or
// that names a string neither side holds is a miss, never an answer.
package resultcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// Format is the version of keys and entries: a cache written by a drift with another
// format is never read (its keys differ, and an entry says its format).
const Format = 3

// Key is everything that decides one object's dry-run answer.
type Key struct {
	// Cluster names the cluster: the API server's URL and its kube-system namespace's
	// uid (an ephemeral server is a new cluster every run).
	Cluster string
	// User is who asks (the username and groups the server authenticates), since
	// what one may do another may not.
	User string
	// ServerVersion is the API server's gitVersion.
	ServerVersion string
	// Admission digests the admission configuration that may change an answer: every
	// mutating and validating webhook configuration and admission policy, by name and
	// resourceVersion.
	Admission string
	// Applier is the applier's name, Manager the field manager sent, Force whether
	// conflicts are forced, and Method how the object is sent.
	Applier, Manager, Method string
	Force                    bool
	// LiveUID and LiveResourceVersion are the live object's ("" when it is absent).
	LiveUID, LiveResourceVersion string
	// CRD is the resourceVersion of the CustomResourceDefinition of a custom
	// resource ("" for a built-in kind).
	CRD string
	// Access digests the RBAC objects (roles, bindings) that decide what User may do.
	Access string
	// Namespace digests the object's namespace (uid, resourceVersion: labels such as
	// Pod Security's, deletion) and its ResourceQuotas and LimitRanges ("" for a
	// cluster-scoped object).
	Namespace string
	// Sent are the exact bytes the request carries (the body of the apply or patch).
	Sent []byte
}

// Digest is the key's hash, in hex.
func (k Key) Digest() string {
	sum := k.sum()
	return hex.EncodeToString(sum[:])
}

// sum is the key's hash.
func (k Key) sum() [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "drift resultcache %d\n", Format)
	for _, f := range []string{k.Cluster, k.User, k.ServerVersion, k.Admission, k.Applier, k.Manager, k.Method, fmt.Sprint(k.Force), k.LiveUID, k.LiveResourceVersion, k.CRD, k.Access, k.Namespace} {
		fmt.Fprintf(h, "%d:%s\n", len(f), f)
	}
	sent := sha256.Sum256(k.Sent)
	h.Write(sent[:])
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// Answer is what a dry run answered that the cache keeps: the prediction and the
// server's warnings.
type Answer struct {
	Merged   *unstructured.Unstructured
	Warnings []string
	// SecretData says the prediction is a Secret's: every value under its data and
	// stringData is secret, whether or not the run knows it yet.
	SecretData bool
	// SameAsLive says the prediction is the live object the key names, field for
	// field (an object the apply leaves as it is): it is stored as this flag alone,
	// and Merged is nil when Get returns it (Cluster.Get copies the live object).
	SameAsLive bool
}

// storedEntry is an answer as it is stored (put writes it).
type storedEntry struct {
	Format   int            `json:"format"`
	Merged   map[string]any `json:"merged"`
	Warnings []string       `json:"warnings,omitempty"`
	// SameAsLive stands for a prediction that is the live object (Answer.SameAsLive).
	SameAsLive bool `json:"sameAsLive,omitempty"`
}

// Store is a cache directory, as one run reads and writes it: the answers of the
// packs there when it was opened, and the pack the run writes (Close puts it in
// place). Its zero value is unusable; Open it.
type Store struct {
	dir   *cachedir.Dir
	build string
	mac   *recordMAC
	// secretHash computes secretSum's keyed hashes.
	secretHash sync.Pool
	// secret says whether a string holds a value that must not be stored in clear
	// (the run's scrubber: Secret values, masked values, credentials).
	secret func(string) bool
	// Notef is told, once each, why the cache was not used (nil: not told).
	Notef func(format string, args ...any)
	// Settle is how long after a change to what decides answers (the admission
	// configuration, RBAC, CRDs, a namespace) answers are not stored: the API server
	// applies such a change a moment after it stores it. DefaultSettle unless set.
	Settle time.Duration
	// Now is the clock: when a change is recent, when a pack was written.
	Now func() time.Time

	mu    sync.Mutex
	noted map[string]bool
	// index locates the answers of the packs read, the newest pack's first.
	index map[[32]byte]location
	packs []*packFile
	// out is the run's pack, made on its first answer; broken once it failed.
	out    *packWriter
	broken bool
	// held are the answers Put while Hold holds them.
	holding bool
	held    []heldPut
}

// heldPut is an answer waiting for Release: its prediction as JSON (a fraction of
// the decoded object's size), with its warnings and its sources.
type heldPut struct {
	k          Key
	merged     []byte
	warnings   []string
	secretData bool
	sameAsLive bool
	sources    Sources
}

// Sources are what an answer may take its secret strings from: what the request
// carried and the live copy (objects, or decoded JSON), asked for only when an
// answer holds a secret.
type Sources func() []any

// Of are the sources srcs.
func Of(srcs ...any) Sources { return func() []any { return srcs } }

// Open is the store in dir (created when its first answer is written), for the drift
// build (BuildID): packs another build wrote are not read, and answers, records and
// secret strings' hashes are keyed with dir's key, so that what anyone else wrote
// there is a miss. secret tells the strings that must never be written in clear.
func Open(dir *cachedir.Dir, build string, secret func(string) bool) *Store {
	s := &Store{dir: dir, build: build, mac: newRecordMAC(dir, "dry-run answer", build), secret: secret, noted: map[string]bool{}, Now: time.Now, Settle: DefaultSettle}
	s.secretHash.New = func() any { return dir.MAC("secret string") }
	return s
}

// DefaultSettle is Store.Settle's default.
const DefaultSettle = time.Minute

// versionDir is where this format's packs and records are, in the cache directory.
func versionDir() string { return "v" + fmt.Sprint(Format) }

// load reads the index of every pack, once, on first use; a pack that cannot be read
// is left out (and said).
func (s *Store) load() {
	if s.index != nil {
		return
	}
	s.index = map[[32]byte]location{}
	paths := packsIn(s.dir, versionDir())
	// Oldest first, so that a newer pack's answer for a digest wins.
	for i := len(paths) - 1; i >= 0; i-- {
		pf, index, err := readPack(s.dir, paths[i], s.build, s.mac)
		switch {
		case errors.Is(err, errOtherBuild):
			s.note("build", "the dry-run cache at %s holds answers another build of drift wrote: they are not used", s.dir.Path())
			continue
		case errors.Is(err, fs.ErrNotExist):
			continue // pruned by another run since it was listed
		case err != nil:
			s.note("corrupt", "the dry-run cache file %s cannot be read (%v): its answers are ignored, and the objects sent", path.Base(paths[i]), err)
			continue
		}
		s.packs = append(s.packs, pf)
		maps.Copy(s.index, index)
	}
}

// recordPath is where the record of a cluster is kept, in the cache directory.
func recordPath(cluster string) string {
	return versionDir() + "/clusters/" + hashOf(cluster) + ".json"
}

// readRecord is what the previous run on the cluster recorded (nil: none, unreadable,
// or not sealed by drift with the cache's key).
func (s *Store) readRecord(cluster string) map[string]group {
	data, err := s.dir.ReadSealed(recordPath(cluster))
	if err != nil {
		return nil
	}
	var rec map[string]group
	if json.Unmarshal(data, &rec) != nil {
		return nil
	}
	return rec
}

// writeRecord records the cluster's groups for the next run.
func (s *Store) writeRecord(cluster string, groups map[string]group) {
	data, err := json.Marshal(groups)
	if err != nil {
		return
	}
	if err := s.dir.WriteSealed(recordPath(cluster), data); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.note("write", "the dry-run cache at %s cannot be written (%v): answers are not kept for the next run", s.dir.Path(), err)
	}
}

// note tells Notef why the cache was not used, once per kind; s.mu is held.
func (s *Store) note(kind, format string, args ...any) {
	if s.Notef == nil || s.noted[kind] {
		return
	}
	s.noted[kind] = true
	s.Notef(format, args...)
}

// Get is the answer stored for k, its secret strings restored from the strings of
// sources; ok is false on a miss. An answer used is written to the run's pack again,
// so that it outlives the pack it was read from.
func (s *Store) Get(k Key, sources Sources) (Answer, bool) {
	d := k.sum()
	s.mu.Lock()
	s.load()
	loc, ok := s.index[d]
	s.mu.Unlock()
	if !ok {
		return Answer{}, false
	}
	payload, err := loc.read(d)
	var e storedEntry
	// Numbers are read as the API machinery reads a server's answer (int64 when
	// whole, sigs.k8s.io/json), so that an answer from the cache is the object the
	// server's JSON decodes to.
	if err == nil {
		if err = sigsjson.UnmarshalCaseSensitivePreserveInts(payload, &e); err == nil && (e.Format != Format || (e.Merged == nil) == !e.SameAsLive) {
			err = fmt.Errorf("not an answer this drift reads")
		}
	}
	stored := e.Merged
	if err != nil {
		s.mu.Lock()
		if errors.Is(err, errNotOurs) {
			s.note("forged", "a dry-run cache entry in %s does not match its MAC (damaged, or not written by drift with this cache's key): it is ignored, and the object sent", loc.pack.name)
		} else {
			s.note("corrupt", "a dry-run cache entry in %s cannot be read (%v): it is ignored, and the object sent", loc.pack.name, err)
		}
		s.mu.Unlock()
		return Answer{}, false
	}
	if e.SameAsLive {
		s.keep(d, payload)
		return Answer{Warnings: e.Warnings, SameAsLive: true}, true
	}
	if bytes.Contains(payload, placeholderJSON) {
		// Only an answer that hid a secret reads its sources.
		merged, ok := restore(stored, s.stringsByHash(sources()...)).(map[string]any)
		if !ok {
			return Answer{}, false // a string no source holds: not this object's answer
		}
		stored = merged
	}
	s.keep(d, payload)
	return Answer{Merged: &unstructured.Unstructured{Object: stored}, Warnings: e.Warnings}, true
}

// Put stores the answer for k, unless it holds a secret string that none of sources
// holds (a value only the server knows): then nothing is stored, and the next run
// sends the object again. While Hold holds, the answer waits for Release (a copy of
// it, and the strings of its sources: the caller goes on with them).
func (s *Store) Put(k Key, a Answer, sources Sources) {
	s.mu.Lock()
	holding := s.holding
	s.mu.Unlock()
	if !holding {
		s.put(k, a, sources)
		return
	}
	var merged []byte
	if !a.SameAsLive {
		var err error
		if merged, err = json.Marshal(a.Merged.Object); err != nil {
			return
		}
	}
	held := heldPut{k: k, merged: merged, warnings: slices.Clone(a.Warnings), secretData: a.SecretData, sameAsLive: a.SameAsLive, sources: sources}
	s.mu.Lock()
	if s.holding {
		s.held = append(s.held, held)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock() // released meanwhile
	s.release(held)
}

// Hold keeps the answers Put from being stored until Release: a run holds them
// until it knows every value it must hide (the scrubber's), since an answer may hold
// a Secret's value the run has not read yet.
func (s *Store) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holding = true
}

// holds reports whether the store holds the answers Put.
func (s *Store) holds() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holding
}

// Release stores the answers held since Hold, and those Put from now on.
func (s *Store) Release() {
	s.mu.Lock()
	held := s.held
	s.held, s.holding = nil, false
	s.mu.Unlock()
	for _, h := range held {
		s.release(h)
	}
}

// release stores a held answer.
func (s *Store) release(h heldPut) {
	if h.sameAsLive {
		s.put(h.k, Answer{Warnings: h.warnings, SameAsLive: true}, h.sources)
		return
	}
	var merged map[string]any
	if sigsjson.UnmarshalCaseSensitivePreserveInts(h.merged, &merged) != nil {
		return
	}
	s.put(h.k, Answer{Merged: &unstructured.Unstructured{Object: merged}, Warnings: h.warnings, SecretData: h.secretData}, h.sources)
}

// put stores an answer, written with its secrets hidden.
func (s *Store) put(k Key, a Answer, sources Sources) {
	for _, w := range a.Warnings {
		if s.secret(w) {
			return
		}
	}
	warnings, err := json.Marshal(a.Warnings)
	if err != nil {
		return
	}
	h := &hider{s: s, sources: sources, ok: true}
	h.buf = append(h.buf, `{"format":`...)
	h.buf = strconv.AppendInt(h.buf, Format, 10)
	h.buf = append(h.buf, `,"warnings":`...)
	h.buf = append(h.buf, warnings...)
	if a.SameAsLive {
		// No value of the object: the live copy is the answer.
		h.buf = append(h.buf, `,"sameAsLive":true}`...)
		s.keep(k.sum(), h.buf)
		return
	}
	h.buf = append(h.buf, `,"merged":{`...)
	// A Secret's data and stringData are secret, every value of them.
	keys := slices.Sorted(maps.Keys(a.Merged.Object))
	for i, key := range keys {
		if s.secret(key) {
			return
		}
		if i > 0 {
			h.buf = append(h.buf, ',')
		}
		h.buf = appendString(h.buf, key)
		h.buf = append(h.buf, ':')
		h.value(a.Merged.Object[key], a.SecretData && (key == "data" || key == "stringData"))
	}
	h.buf = append(h.buf, "}}"...)
	if !h.ok {
		return
	}
	s.keep(k.sum(), h.buf)
}

// keep writes an answer to the run's pack.
func (s *Store) keep(d [32]byte, payload []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return
	}
	if s.out == nil {
		out, err := newPackWriter(s.dir, versionDir(), s.build, s.mac)
		if err != nil {
			s.broken = true
			s.note("write", "the dry-run cache at %s cannot be written (%v): answers are not kept for the next run", s.dir.Path(), err)
			return
		}
		s.out = out
	}
	if err := s.out.add(d, payload); err != nil {
		s.broken = true
		s.note("write", "the dry-run cache at %s cannot be written (%v): answers are not kept for the next run", s.dir.Path(), err)
	}
}

// Close puts the run's pack in place and closes the packs read. Answers still held
// are dropped: the run never learned every value to hide in them. The store is not
// used after.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = nil
	for _, pf := range s.packs {
		pf.f.Close()
	}
	s.packs, s.index = nil, nil
	if s.out == nil || s.broken {
		if s.out != nil {
			s.out.tmp.Close()
			os.Remove(s.out.tmp.Name())
		}
		return nil
	}
	err := s.out.finish(s.Now())
	s.out = nil
	if err != nil {
		s.note("write", "the dry-run cache at %s cannot be written (%v): answers are not kept for the next run", s.dir.Path(), err)
	}
	return err
}

// placeholder marks a secret string in a stored entry by its keyed hash
// (Store.secretSum): whoever reads the cache cannot confirm a guessed value offline
// without the cache's key.
const placeholder = "\x00drift-secret:hmac-sha256:"

// placeholderJSON is the placeholder as JSON writes it.
var placeholderJSON = []byte(`\u0000drift-secret:hmac-sha256:`)

// restore puts the strings back; nil when one is not in hashes.
func restore(v any, hashes map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			r := restore(e, hashes)
			if r == nil && e != nil {
				return nil
			}
			x[k] = r
		}
		return x
	case []any:
		for i, e := range x {
			r := restore(e, hashes)
			if r == nil && e != nil {
				return nil
			}
			x[i] = r
		}
		return x
	case string:
		if h, ok := strings.CutPrefix(x, placeholder); ok {
			s, found := hashes[h]
			if !found {
				return nil
			}
			return s
		}
		return x
	}
	return v
}

// stringsByHash are the string values in sources (objects, or decoded JSON), by
// their keyed hash (secretSum).
func (s *Store) stringsByHash(sources ...any) map[string]string {
	out := map[string]string{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			out[s.secretSum(x)] = x
		}
	}
	for _, src := range sources {
		switch x := src.(type) {
		case *unstructured.Unstructured:
			if x != nil {
				walk(x.Object)
			}
		default:
			walk(x)
		}
	}
	return out
}

// hashOf names a file after s (a cluster, a repository's path).
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// secretSum is the keyed hash a secret string is stored as, in hex.
func (s *Store) secretSum(v string) string {
	h := s.secretHash.Get().(hash.Hash)
	defer s.secretHash.Put(h)
	h.Reset()
	h.Write([]byte(v))
	return hex.EncodeToString(h.Sum(nil))
}
