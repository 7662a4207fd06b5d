// Package scrub keeps secret values out of everything drift writes: a run's one
// Scrubber is told every credential, Secret value and masked value, and replaces each,
// in every form it may take, wherever it appears.
package scrub

import (
	"encoding/binary"
	"encoding/json"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/yaml"
)

// MinScrubLength is the shortest value (and line of a multi-line value) scrubbed
// wherever it appears. Shorter ones would turn every "a" or "}" of the report into
// ***; the field that holds them is still masked as a whole.
const MinScrubLength = 4

// minLineInYAML is the shortest line of a multi-line value scrubbed inside the YAML of
// objects and diffs, where only a line without spaces counts (a key's base64, a
// token): a value's ordinary lines ("apiVersion: v1" of a kubeconfig held in a Secret)
// are in every manifest, and the whole value is scrubbed there anyway.
const minLineInYAML = 16

// Scrubber replaces secret values wherever they appear in the report, in every form
// they may take there: raw, JSON-escaped, base64 (standard and URL, padded or not,
// and inside the base64 of a longer string at any alignment), URL-escaped, and for a
// multi-line value each line. It is fed with the values of every Secret the run
// renders or reads, every masked value, and credentials handed in. It is safe for
// concurrent use.
//
// A Secret value that is also the name or namespace of an object of the run (a
// username "shop" in namespace shop) is not scrubbed: the report names the object
// anyway, and scrubbing it would hide every name and file name of the report.
type Scrubber struct {
	mu sync.Mutex
	// values maps each value, without surrounding space, to its forms.
	values map[string]*forms
	// public are the names and namespaces of the run's objects.
	public map[string]bool
	// built indexes the needles of each use by their first bytes; nil when the
	// needles changed since (set under mu, read without it).
	built atomic.Pointer[indexes]
}

// forms are what a value may look like in output: forms scrubbed everywhere, and the
// lines of a multi-line value, scrubbed in messages and, when token-like, in YAML.
type forms struct {
	forms, lines []string
	// credential values are scrubbed even when public.
	credential bool
}

// Masked is what a scrubbed or masked value is shown as, as kubectl diff shows it.
const Masked = "***"

// New returns a scrubber without values.
func New() *Scrubber {
	return &Scrubber{values: map[string]*forms{}, public: map[string]bool{}}
}

// AddCredential adds values that must never reach output, such as the GitHub token or
// the cluster's bearer token, password or client key.
func (s *Scrubber) AddCredential(values ...string) {
	for _, v := range values {
		s.add(v, true)
	}
}

// AddSecretData adds values read from Secrets outside the report's objects, of any
// type decoded from YAML or JSON (a HelmRelease's values, substitution variables,
// what Helm's lookup read), each value by value: a string holding a YAML or JSON
// document (a values.yaml kept in a Secret) adds every leaf of it too, since a
// template may place any one of them alone.
func (s *Scrubber) AddSecretData(values ...any) {
	for _, v := range values {
		s.AddValue(v)
		if str, ok := v.(string); ok && strings.ContainsAny(str, ":\n[{") {
			var doc any
			if err := yaml.Unmarshal([]byte(str), &doc); err == nil {
				switch doc.(type) {
				case map[string]any, []any:
					s.AddValue(doc)
				}
			}
		}
	}
}

// AddPublic marks names the report shows anyway (of targets, objects and namespaces):
// a value that is one of them is not scrubbed unless it is a credential.
func (s *Scrubber) AddPublic(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if n != "" && !s.public[n] {
			s.public[n] = true
			s.built.Store(nil)
		}
	}
}

// Scrub replaces every form of every value in text with "***". Overlapping and
// adjacent occurrences become one "***", so no part of any value is left.
func (s *Scrubber) Scrub(text string) string {
	all, _ := s.indexes()
	return all.replace(text)
}

// Holds reports whether Scrub would change text: whether a value it scrubs occurs in
// it. It writes nothing, and stops at the first.
func (s *Scrubber) Holds(text string) bool {
	all, _ := s.indexes()
	return all.holds(text)
}

// YAML scrubs YAML or a diff of it line by line, so lines are neither joined nor
// split and a diff stays a diff; lines of multi-line values count only if token-like.
func (s *Scrubber) YAML(text string) string {
	_, yaml := s.indexes()
	if len(yaml.needles) == 0 || text == "" {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = yaml.replace(l)
	}
	return strings.Join(lines, "\n")
}

// AddValue adds a value of any type decoded from YAML or JSON: strings, numbers as the
// server prints them, maps and lists as their JSON and each of their leaves.
func (s *Scrubber) AddValue(v any) {
	switch x := v.(type) {
	case nil, bool:
		// One bit, and "true" is in every manifest: never scrubbed as a substring.
	case string:
		s.addString(x)
	case []byte:
		s.addString(string(x))
	case map[string]any:
		s.addComposite(x)
		for _, e := range x {
			s.AddValue(e)
		}
	case []any:
		s.addComposite(x)
		for _, e := range x {
			s.AddValue(e)
		}
	default:
		for _, t := range numberForms(x) {
			s.addString(t)
		}
	}
}

func (s *Scrubber) addComposite(v any) {
	if b, err := json.Marshal(v); err == nil {
		s.addString(string(b))
	}
}

func (s *Scrubber) addString(v string) { s.add(v, false) }

// add adds a string value in all its forms, and the same for the value without
// surrounding space (a file's trailing newline is often not quoted).
func (s *Scrubber) add(v string, credential bool) {
	trimmed := strings.TrimSpace(v)
	if len(trimmed) < MinScrubLength || isLiteral(trimmed) {
		return
	}
	s.mu.Lock()
	if old := s.values[trimmed]; old != nil && slices.Contains(old.forms, v) {
		if credential && !old.credential {
			old.credential = true
			s.built.Store(nil)
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	nf := &forms{credential: credential}
	for _, x := range []string{v, trimmed} {
		nf.forms = append(nf.forms, x, url.QueryEscape(x), url.PathEscape(x))
		nf.forms = append(nf.forms, escapedForms(x)...)
		nf.forms = append(nf.forms, base64Forms(x)...)
	}
	if strings.Contains(trimmed, "\n") {
		for _, l := range strings.Split(trimmed, "\n") {
			if l = strings.TrimSpace(l); !trivialLine(l) {
				nf.lines = append(nf.lines, l)
				nf.lines = append(nf.lines, escapedForms(l)...)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.values[trimmed]; old != nil {
		nf.forms = append(nf.forms, old.forms...)
		nf.lines = append(nf.lines, old.lines...)
		nf.credential = nf.credential || old.credential
	}
	s.values[trimmed] = nf
	s.built.Store(nil)
}

// indexes returns the needles of messages (every form and line) and of YAML (every
// form, token-like lines), built once after the values change. Reading them takes
// no lock: every scalar of every object asks, from every worker.
func (s *Scrubber) indexes() (all, yaml *index) {
	if b := s.built.Load(); b != nil {
		return b.all, b.yaml
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.built.Load(); b != nil {
		return b.all, b.yaml
	}
	b := &indexes{all: newIndex(), yaml: newIndex()}
	for v, f := range s.values {
		if s.public[v] && !f.credential {
			continue
		}
		for _, n := range f.forms {
			b.all.add(n)
			b.yaml.add(n)
		}
		for _, l := range f.lines {
			if s.public[l] && !f.credential {
				continue
			}
			b.all.add(l)
			if tokenLike(l) {
				b.yaml.add(l)
			}
		}
	}
	b.all.sort()
	b.yaml.sort()
	s.built.Store(b)
	return b.all, b.yaml
}

// indexes are the needles of messages and of YAML.
type indexes struct{ all, yaml *index }

// index maps the first MinScrubLength bytes of each needle to the needles, longest
// first, so that text is scanned once however many needles there are.
// index holds needles by the key of their first MinScrubLength bytes.
type index struct {
	needles map[uint32][]string
	// filter has the bit of each needle's key set (bit): most places in a text start
	// no needle, and are passed over without a map lookup.
	filter []uint64
}

func newIndex() *index {
	return &index{needles: map[uint32][]string{}, filter: make([]uint64, 1<<16/64)}
}

func key(s string) uint32 { return binary.LittleEndian.Uint32([]byte(s[:MinScrubLength])) }

// bit is a key's bit in the filter: the top 16 bits of a multiplicative hash.
func bit(k uint32) uint32 { return (k * 2654435761) >> 16 }

func (x *index) add(needle string) {
	if len(needle) < MinScrubLength {
		return
	}
	k := key(needle)
	x.needles[k] = append(x.needles[k], needle)
	b := bit(k)
	x.filter[b/64] |= 1 << (b % 64)
}

// at are the needles that may start at text[i:].
func (x *index) at(text string, i int) []string {
	k := key(text[i:])
	if b := bit(k); x.filter[b/64]&(1<<(b%64)) == 0 {
		return nil
	}
	return x.needles[k]
}

// sort orders each bucket longest first and drops duplicates.
func (x *index) sort() {
	for k, ns := range x.needles {
		sort.Slice(ns, func(i, j int) bool {
			if len(ns[i]) != len(ns[j]) {
				return len(ns[i]) > len(ns[j])
			}
			return ns[i] < ns[j]
		})
		x.needles[k] = slices.Compact(ns)
	}
}

// holds reports whether a needle occurs in text.
func (x *index) holds(text string) bool {
	if len(x.needles) == 0 {
		return false
	}
	for i := 0; i+MinScrubLength <= len(text); i++ {
		for _, n := range x.at(text, i) {
			if strings.HasPrefix(text[i:], n) {
				return true
			}
		}
	}
	return false
}

// replace replaces each run of text covered by occurrences of needles with "***".
func (x *index) replace(text string) string {
	if len(x.needles) == 0 || len(text) < MinScrubLength {
		return text
	}
	var b strings.Builder
	last, start, end := 0, -1, -1
	for i := 0; i+MinScrubLength <= len(text); i++ {
		for _, n := range x.at(text, i) {
			if !strings.HasPrefix(text[i:], n) {
				continue
			}
			if start >= 0 && i > end {
				b.WriteString(text[last:start])
				b.WriteString(Masked)
				last, start = end, -1
			}
			if start < 0 {
				start, end = i, i+len(n)
			}
			end = max(end, i+len(n))
			break
		}
	}
	if start < 0 {
		if last == 0 {
			return text
		}
	} else {
		b.WriteString(text[last:start])
		b.WriteString(Masked)
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}
