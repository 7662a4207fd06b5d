package resultcache

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// A pack is one run's answers in one file, so that a run writes one file however many
// answers it keeps (a file per answer cost more than the dry runs it saved) and reads
// one index per pack. A run writes every answer it used, those it took from older
// packs too, so the newest packs hold what the latest runs need and the oldest can
// go (Prune).
//
//	header   "drift-resultcache-pack\n" format(uint32) len(uint32) build
//	records  digest(32) len(uint32) payload mac(32)   ...
//	index    digest(32) offset(uint64) len(uint32)    ...
//	trailer  indexOffset(uint64) count(uint32) "DRIFTEND"
//
// Numbers are big-endian. A record's mac is the HMAC-SHA256, under the cache's key
// (cachedir), of the build, the digest and the payload: a record anyone else wrote,
// or one moved to another digest or from another build, is a miss. A pack is written
// under a temporary name and renamed into place once its index is written: a pack
// is whole or not there.
const (
	packMagic    = "drift-resultcache-pack\n"
	trailerMagic = "DRIFTEND"
	trailerSize  = 8 + 4 + len(trailerMagic)
	indexRecord  = 32 + 8 + 4
	// macSize is a record's MAC's length.
	macSize = sha256.Size
	// maxPayload bounds one answer as a pack holds it.
	maxPayload = 64 << 20
	// packSuffix names finished packs; temporary ones start with ".tmp-".
	packSuffix = ".pack"
	// staleTemp is how old a temporary pack must be for Prune to take it for the
	// leftover of a run that died.
	staleTemp = time.Hour
)

// BuildID names the drift that writes answers: its version and the commit it was
// built from, and for a build that knows no commit (built outside a git checkout,
// or with -buildvcs=false) its executable's Go build ID, which changes with any
// change to its code. A pack written by another build is not read, since what an
// answer holds may differ between builds.
func BuildID() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	exe, _ := os.Executable()
	return BuildIDOf(info, exe)
}

// BuildIDOf is BuildID of the drift whose build information is info and whose
// executable is exe.
func BuildIDOf(info *debug.BuildInfo, exe string) string {
	id := info.Main.Version
	commit := false
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" || s.Key == "-ldflags" {
			id += " " + s.Key + "=" + s.Value
			commit = commit || s.Key == "vcs.revision"
		}
	}
	if !commit {
		if b := goBuildID(exe); b != "" {
			id += " buildid=" + b
		}
	}
	return id
}

// goBuildID is the Go build ID of the executable at path ("" when it has none that
// can be read): in an ELF file its .note.go.buildid note, elsewhere the string the
// linker writes at the start of the text, as go tool buildid reads them.
func goBuildID(path string) string {
	if path == "" {
		return ""
	}
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil {
			// namesz, descsz, type, then the name "Go\0\0" and the ID.
			if data, err := s.Data(); err == nil && len(data) > 16 {
				size := f.ByteOrder.Uint32(data[4:8])
				if string(data[12:16]) == "Go\x00\x00" && int(size) <= len(data)-16 {
					return string(data[16 : 16+size])
				}
			}
		}
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	if i := bytes.Index(head[:n], []byte(prefix)); i >= 0 {
		rest := head[i+len(prefix) : n]
		if j := bytes.Index(rest, []byte(suffix)); j >= 0 {
			return string(rest[:j])
		}
	}
	return ""
}

// location is where a pack holds one answer.
type location struct {
	pack   *packFile
	offset int64
	length uint32
}

// packFile is a finished pack, open for reading, and how its records are checked.
type packFile struct {
	name string
	f    *os.File
	mac  *recordMAC
}

// readPack opens the finished pack rel of dir and reads its index; it fails on a pack
// of another format or build, or one whose index is damaged.
func readPack(dir *cachedir.Dir, rel, build string, mac *recordMAC) (*packFile, map[[32]byte]location, error) {
	f, err := dir.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	pf := &packFile{name: path.Base(rel), f: f, mac: mac}
	index, err := pf.readIndex(build)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return pf, index, nil
}

// errOtherBuild is a pack written by another drift.
var errOtherBuild = errors.New("written by another build of drift")

func (pf *packFile) readIndex(build string) (map[[32]byte]location, error) {
	info, err := pf.f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	head := make([]byte, len(packMagic)+8)
	if _, err := pf.f.ReadAt(head, 0); err != nil || string(head[:len(packMagic)]) != packMagic {
		return nil, fmt.Errorf("not a pack")
	}
	if binary.BigEndian.Uint32(head[len(packMagic):]) != Format {
		return nil, errOtherBuild
	}
	n := binary.BigEndian.Uint32(head[len(packMagic)+4:])
	if int64(n) > size || n > 4096 {
		return nil, fmt.Errorf("damaged header")
	}
	b := make([]byte, n)
	if _, err := pf.f.ReadAt(b, int64(len(head))); err != nil {
		return nil, err
	}
	if string(b) != build {
		return nil, errOtherBuild
	}
	dataStart := int64(len(head)) + int64(n)
	if size < dataStart+int64(trailerSize) {
		return nil, fmt.Errorf("truncated")
	}
	trailer := make([]byte, trailerSize)
	if _, err := pf.f.ReadAt(trailer, size-int64(trailerSize)); err != nil {
		return nil, err
	}
	if string(trailer[12:]) != trailerMagic {
		return nil, fmt.Errorf("truncated")
	}
	indexAt, count := int64(binary.BigEndian.Uint64(trailer)), int64(binary.BigEndian.Uint32(trailer[8:]))
	if indexAt < dataStart || indexAt+count*int64(indexRecord) != size-int64(trailerSize) {
		return nil, fmt.Errorf("damaged index")
	}
	raw := make([]byte, count*int64(indexRecord))
	if _, err := pf.f.ReadAt(raw, indexAt); err != nil {
		return nil, err
	}
	index := make(map[[32]byte]location, count)
	for i := int64(0); i < count; i++ {
		rec := raw[i*int64(indexRecord):]
		var d [32]byte
		copy(d[:], rec[:32])
		off, length := int64(binary.BigEndian.Uint64(rec[32:])), binary.BigEndian.Uint32(rec[40:])
		if off < dataStart+32+4 || off+int64(length)+macSize > indexAt || length > maxPayload {
			return nil, fmt.Errorf("damaged index")
		}
		index[d] = location{pack: pf, offset: off, length: length}
	}
	return index, nil
}

// read is the payload at l, the answer for digest d, checked against its MAC.
func (l location) read(d [32]byte) ([]byte, error) {
	buf := make([]byte, int(l.length)+macSize)
	if _, err := l.pack.f.ReadAt(buf, l.offset); err != nil {
		return nil, err
	}
	payload := buf[:l.length]
	if !hmac.Equal(l.pack.mac.sum(d, payload), buf[l.length:]) {
		return nil, errNotOurs
	}
	return payload, nil
}

// errNotOurs is a record whose MAC does not match: not written by drift with this
// cache's key, for this digest and build.
var errNotOurs = errors.New("not written by drift with this cache's key")

// recordMAC computes records' MACs for one build under one cache's key.
type recordMAC struct {
	build string
	pool  sync.Pool
}

func newRecordMAC(dir *cachedir.Dir, purpose, build string) *recordMAC {
	m := &recordMAC{build: build}
	m.pool.New = func() any { return dir.MAC(purpose) }
	return m
}

// sum is the MAC of the record of digest d holding payload.
func (m *recordMAC) sum(d [32]byte, payload []byte) []byte {
	h := m.pool.Get().(hash.Hash)
	defer m.pool.Put(h)
	h.Reset()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(m.build)))
	h.Write(n[:])
	h.Write([]byte(m.build))
	h.Write(d[:])
	h.Write(payload)
	return h.Sum(nil)
}

// packWriter writes the run's pack: records as they come, the index at the end.
type packWriter struct {
	dir   *cachedir.Dir
	rel   string
	mac   *recordMAC
	tmp   *os.File
	w     *bufio.Writer
	off   int64
	index map[[32]byte][2]int64 // digest: offset, length
	order [][32]byte
	err   error
}

// newPackWriter starts a pack in the directory rel of dir.
func newPackWriter(dir *cachedir.Dir, rel, build string, mac *recordMAC) (*packWriter, error) {
	tmp, err := dir.CreateTemp(rel, ".tmp-")
	if err != nil {
		return nil, err
	}
	pw := &packWriter{dir: dir, rel: rel, mac: mac, tmp: tmp, w: bufio.NewWriterSize(tmp, 256<<10), index: map[[32]byte][2]int64{}}
	var head bytes.Buffer
	head.WriteString(packMagic)
	_ = binary.Write(&head, binary.BigEndian, uint32(Format))
	_ = binary.Write(&head, binary.BigEndian, uint32(len(build)))
	head.WriteString(build)
	pw.write(head.Bytes())
	return pw, pw.err
}

func (pw *packWriter) write(b []byte) {
	if pw.err != nil {
		return
	}
	n, err := pw.w.Write(b)
	pw.off += int64(n)
	pw.err = err
}

// add writes one answer, once per digest.
func (pw *packWriter) add(d [32]byte, payload []byte) error {
	if _, ok := pw.index[d]; ok || len(payload) > maxPayload {
		return pw.err
	}
	var n [4]byte
	pw.write(d[:])
	binary.BigEndian.PutUint32(n[:], uint32(len(payload)))
	pw.write(n[:])
	at := pw.off
	pw.write(payload)
	pw.write(pw.mac.sum(d, payload))
	if pw.err == nil {
		pw.index[d] = [2]int64{at, int64(len(payload))}
		pw.order = append(pw.order, d)
	}
	return pw.err
}

// finish writes the index and puts the pack in place, named by now; a pack with no
// answers is removed.
func (pw *packWriter) finish(now time.Time) error {
	defer os.Remove(pw.tmp.Name()) // gone once renamed
	if len(pw.order) == 0 && pw.err == nil {
		return pw.tmp.Close()
	}
	indexAt := pw.off
	rec := make([]byte, indexRecord)
	for _, d := range pw.order {
		loc := pw.index[d]
		copy(rec, d[:])
		binary.BigEndian.PutUint64(rec[32:], uint64(loc[0]))
		binary.BigEndian.PutUint32(rec[40:], uint32(loc[1]))
		pw.write(rec)
	}
	trailer := make([]byte, trailerSize)
	binary.BigEndian.PutUint64(trailer, uint64(indexAt))
	binary.BigEndian.PutUint32(trailer[8:], uint32(len(pw.order)))
	copy(trailer[12:], trailerMagic)
	pw.write(trailer)
	if pw.err == nil {
		pw.err = pw.w.Flush()
	}
	if err := pw.tmp.Close(); pw.err == nil {
		pw.err = err
	}
	if pw.err != nil {
		return pw.err
	}
	// Named by when it was written (packsIn orders by name), and by the temporary
	// name's random part, so that runs side by side never write the same name.
	name := fmt.Sprintf("%020d-%s%s", now.UnixNano(), strings.TrimPrefix(filepath.Base(pw.tmp.Name()), ".tmp-"), packSuffix)
	return pw.dir.Rename(pw.tmp.Name(), pw.rel+"/"+name)
}

// packsIn are the finished packs of the directory rel of dir, newest first (by name:
// their writing time), as paths relative to dir.
func packsIn(dir *cachedir.Dir, rel string) []string {
	entries, err := dir.ReadDir(rel)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), packSuffix) {
			out = append(out, rel+"/"+e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}
