package resultcache

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/discover"
)

// Scans remembers, per repository, what discovery found reading each file's text (by
// the git object id of its content), so that a repeat run reads only the files that
// changed. It holds no content: an id, whether the text names an Argo CD or Flux
// API group, and whether its documents define an object discovery reads. Each run
// writes what it saw, so the record follows the repository.
type Scans struct {
	dir         *cachedir.Dir
	path, build string

	mu   sync.Mutex
	old  map[string]discover.Scan
	seen map[string]discover.Scan
}

// scansMagic starts a scans file; the build that wrote it follows on its line.
const scansMagic = "drift-scans 1 "

// OpenScans reads the record of the repository at root (its work tree), kept
// in the cache directory dir for the drift build (BuildID): a record another build
// wrote, one that cannot be read, or one not sealed with dir's key (anyone else's),
// is no record.
func OpenScans(dir *cachedir.Dir, build, root string) *Scans {
	sum := hashOf(root)
	s := &Scans{dir: dir, path: versionDir() + "/scans/" + sum[:32] + ".txt", build: build,
		old: map[string]discover.Scan{}, seen: map[string]discover.Scan{}}
	data, err := dir.ReadSealed(s.path)
	if err != nil {
		return s
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != scansMagic+build {
		return s
	}
	for sc.Scan() {
		id, scan, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if !ok || len(id) != 40 || len(scan) != 1 || scan[0] < '1' || scan[0] > '4' {
			return &Scans{dir: dir, path: s.path, build: build, old: map[string]discover.Scan{}, seen: map[string]discover.Scan{}}
		}
		if _, err := hex.DecodeString(string(id)); err != nil {
			return &Scans{dir: dir, path: s.path, build: build, old: map[string]discover.Scan{}, seen: map[string]discover.Scan{}}
		}
		s.old[string(id)] = discover.Scan(scan[0] - '0')
	}
	return s
}

// Scanned is what was found in the content with id, if this run or an earlier one
// read it.
func (s *Scans) Scanned(id string) (discover.Scan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if scan, ok := s.seen[id]; ok {
		return scan, true // read earlier in this run (the other ref's discovery)
	}
	scan, ok := s.old[id]
	if ok {
		s.seen[id] = scan
	}
	return scan, ok
}

// Remember records what was found in the content with id.
func (s *Scans) Remember(id string, scan discover.Scan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[id] = scan
}

// Save writes what this run saw, for the next; nothing when it saw nothing new.
func (s *Scans) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 || (len(s.seen) == len(s.old) && sameScans(s.seen, s.old)) {
		return nil
	}
	ids := make([]string, 0, len(s.seen))
	for id := range s.seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteString(scansMagic + s.build + "\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %d\n", id, s.seen[id])
	}
	return s.dir.WriteSealed(s.path, b.Bytes())
}

func sameScans(a, b map[string]discover.Scan) bool {
	for id, scan := range a {
		if b[id] != scan {
			return false
		}
	}
	return true
}

var _ discover.Scans = (*Scans)(nil)
