package resultcache

import (
	"encoding/base64"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/discover"
)

const password = "hunter2-cached-password"

func secret(s string) bool { return strings.Contains(s, password) }

func obj(data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "shop"}, "data": data}}
}

func baseKey() Key {
	return Key{Cluster: "https://a uid-1", User: "admin", ServerVersion: "v1.36.3", Admission: "none", Applier: "kubectl-server-side",
		Manager: "kubectl", Method: "apply", LiveUID: "u1", LiveResourceVersion: "41", Sent: []byte(`{"a":1}`)}
}

// TestEveryPartOfTheKeyDecidesIt: a key differs whenever anything that decides the
// answer does.
func TestEveryPartOfTheKeyDecidesIt(t *testing.T) {
	t.Parallel()
	base := baseKey().Digest()
	for name, edit := range map[string]func(*Key){
		"cluster":        func(k *Key) { k.Cluster = "https://b uid-2" },
		"user":           func(k *Key) { k.User = "ci" },
		"server version": func(k *Key) { k.ServerVersion = "v1.37.0" },
		"admission":      func(k *Key) { k.Admission = "webhook w rv 7" },
		"applier":        func(k *Key) { k.Applier = "flux" },
		"manager":        func(k *Key) { k.Manager = "kustomize-controller" },
		"method":         func(k *Key) { k.Method = "patch" },
		"force":          func(k *Key) { k.Force = true },
		"live uid":       func(k *Key) { k.LiveUID = "u2" },
		"live rv":        func(k *Key) { k.LiveResourceVersion = "42" },
		"absent":         func(k *Key) { k.LiveUID, k.LiveResourceVersion = "", "" },
		"crd":            func(k *Key) { k.CRD = "9" },
		"access":         func(k *Key) { k.Access = "role r rv 3" },
		"namespace":      func(k *Key) { k.Namespace = "shop uid-9 rv 12" },
		"sent":           func(k *Key) { k.Sent = []byte(`{"a":2}`) },
		// Field boundaries: moving a byte from one field to the next is another key.
		"boundary": func(k *Key) { k.Cluster, k.User = "https://a uid-1a", "dmin" },
	} {
		k := baseKey()
		edit(&k)
		if k.Digest() == base {
			t.Errorf("%s: the key does not change", name)
		}
	}
}

// build is the build the tests' stores say wrote them.
const build = "drift test"

// run opens the store in dir as one run of drift does, lets do use it, and closes
// it (its pack put in place).
func run(t *testing.T, dir string, do func(s *Store)) {
	t.Helper()
	s := Open(cdir(t, dir), build, secret)
	do(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// files are the files under dir, but the clusters' records.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestAnAnswerComesBackWithoutItsSecretsStored: a prediction holding a Secret value
// (substituted from a Secret into the object sent) is stored with the value's hash
// only, in no form a reader could find, and comes back whole in the next run.
func TestAnAnswerComesBackWithoutItsSecretsStored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sent := obj(map[string]any{"url": "postgres://app:" + password + "@db"})
	merged := obj(map[string]any{"url": "postgres://app:" + password + "@db", "server": "default"})
	merged.SetResourceVersion("42")
	run(t, dir, func(s *Store) {
		s.Put(baseKey(), Answer{Merged: merged, Warnings: []string{"deprecated"}}, Of(sent, nil))
	})
	stored := files(t, dir)
	if len(stored) != 1 || !strings.HasSuffix(stored[0], packSuffix) {
		t.Fatalf("stored %q, want one pack", stored)
	}
	data := mustRead(t, stored[0])
	for _, form := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), base64.StdEncoding.EncodeToString([]byte("postgres://app:" + password + "@db"))} {
		if strings.Contains(string(data), form) {
			t.Errorf("the pack holds the secret as %q", form)
		}
	}
	run(t, dir, func(s *Store) {
		got, ok := s.Get(baseKey(), Of(sent, nil))
		if !ok || !reflect.DeepEqual(got.Merged.Object, merged.Object) || !reflect.DeepEqual(got.Warnings, []string{"deprecated"}) {
			t.Errorf("got %v %+v, want the answer back", ok, got)
		}
		// Another key misses.
		k := baseKey()
		k.LiveResourceVersion = "43"
		if _, ok := s.Get(k, Of(sent, nil)); ok {
			t.Error("another resourceVersion hits")
		}
		// Without what was sent, the secret cannot be put back: a miss.
		if _, ok := s.Get(baseKey(), Of(obj(nil), nil)); ok {
			t.Error("an answer whose secret no source holds hits")
		}
	})
}

// TestASecretOnlyTheServerKnowsIsNeverStored: a value the answer holds that neither
// the object sent nor the live one does (a mutating webhook's) cannot be restored, so
// nothing is stored.
func TestASecretOnlyTheServerKnowsIsNeverStored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run(t, dir, func(s *Store) {
		s.Put(baseKey(), Answer{Merged: obj(map[string]any{"injected": password})}, Of(obj(nil), nil))
	})
	if n := Size(cdir(t, dir)); n != 0 {
		t.Errorf("%d bytes stored", n)
	}
	run(t, dir, func(s *Store) {
		if _, ok := s.Get(baseKey(), Of(obj(nil), nil)); ok {
			t.Error("a hit")
		}
	})
}

// TestHeldAnswersWaitForTheirSecrets: answers Put while the store holds them are
// stored on Release, hidden by the secrets known then.
func TestHeldAnswersWaitForTheirSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	known := map[string]bool{}
	s := Open(cdir(t, dir), build, func(v string) bool { return known[v] })
	s.Hold()
	const value = "learnt-later-s3cret"
	sent := obj(map[string]any{"copy": value})
	s.Put(baseKey(), Answer{Merged: obj(map[string]any{"copy": value})}, Of(sent))
	known[value] = true // the run reads the Secret it came from
	s.Release()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files(t, dir) {
		if strings.Contains(string(mustRead(t, f)), value) {
			t.Errorf("%s holds the value learnt after the answer was Put", f)
		}
	}
	run(t, dir, func(s *Store) {
		if _, ok := s.Get(baseKey(), Of(sent)); !ok {
			t.Error("the held answer was not stored")
		}
	})
}

// TestDamagedPacksAreMissesWithANote: a truncated pack, a flipped byte in an answer,
// a pack another build or format wrote, and an unwritable directory each make the
// cache say so once and answer nothing from them.
func TestDamagedPacksAreMissesWithANote(t *testing.T) {
	t.Parallel()
	sent := obj(map[string]any{"a": "b"})
	fill := func(t *testing.T) (dir, pack string) {
		dir = t.TempDir()
		run(t, dir, func(s *Store) { s.Put(baseKey(), Answer{Merged: obj(map[string]any{"a": "b"})}, Of(sent, nil)) })
		stored := files(t, dir)
		if len(stored) != 1 {
			t.Fatalf("stored %q", stored)
		}
		return dir, stored[0]
	}
	for name, damage := range map[string]func(data []byte) []byte{
		"truncated":       func(d []byte) []byte { return d[:len(d)-5] },
		"an answer flips": func(d []byte) []byte { i := strings.Index(string(d), `"b"`); d[i+1] = 'c'; return d },
		"another build":   func(d []byte) []byte { return []byte(strings.Replace(string(d), build, "drift tset", 1)) },
		"another format":  func(d []byte) []byte { d[len(packMagic)+3]++; return d },
		"not a pack":      func([]byte) []byte { return []byte("\x00\x01") },
		"index past end":  func(d []byte) []byte { d[len(d)-trailerSize+7] += 100; return d },
	} {
		t.Run(name, func(t *testing.T) {
			dir, pack := fill(t)
			if err := os.WriteFile(pack, damage(mustRead(t, pack)), 0o600); err != nil {
				t.Fatal(err)
			}
			var notes []string
			s := Open(cdir(t, dir), build, secret)
			s.Notef = func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
			for range 2 {
				if _, ok := s.Get(baseKey(), Of(sent, nil)); ok {
					t.Error("a hit")
				}
			}
			if len(notes) != 1 {
				t.Errorf("notes %q, want one", notes)
			}
			_ = s.Close()
		})
	}

	ro := t.TempDir()
	s2 := Open(cdir(t, ro), build, secret)
	if err := os.WriteFile(filepath.Join(ro, versionDir()), nil, 0o600); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	var wrote []string
	s2.Notef = func(format string, args ...any) { wrote = append(wrote, format) }
	s2.Put(baseKey(), Answer{Merged: obj(nil)}, Of(sent, nil))
	s2.Put(baseKey(), Answer{Merged: obj(nil)}, Of(sent, nil))
	if err := s2.Close(); err != nil {
		t.Error(err)
	}
	if len(wrote) != 1 || !strings.Contains(wrote[0], "cannot be written") {
		t.Errorf("unwritable: notes %q", wrote)
	}
}

// TestPruneKeepsTheRecentlyUsed: a run writes the answers it used to its own pack,
// so past the size the oldest packs go and what the latest run used stays; another
// format's answers and a dead run's leftovers go whatever the size.
func TestPruneKeepsTheRecentlyUsed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sent := obj(map[string]any{"a": "b"})
	key := func(i int) Key {
		k := baseKey()
		k.LiveResourceVersion = fmt.Sprint(i)
		return k
	}
	clock := time.Unix(1_700_000_000, 0)
	runAt := func(do func(s *Store)) {
		s := Open(cdir(t, dir), build, secret)
		s.Now = func() time.Time { return clock }
		do(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Minute)
	}
	big := Answer{Merged: obj(map[string]any{"a": strings.Repeat("x", 1000)})}
	// Three runs of ten answers each, then one that uses the first run's 0 and 1.
	for r := range 3 {
		runAt(func(s *Store) {
			for i := r * 10; i < r*10+10; i++ {
				s.Put(key(i), big, Of(sent, nil))
			}
		})
	}
	runAt(func(s *Store) {
		for _, i := range []int{0, 1} {
			if _, ok := s.Get(key(i), Of(sent, nil)); !ok {
				t.Fatalf("answer %d: a miss", i)
			}
		}
	})
	packs := packsIn(cdir(t, dir), versionDir())
	if len(packs) != 4 {
		t.Fatalf("%d packs, want 4", len(packs))
	}
	other := filepath.Join(dir, "v1", "ab")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, strings.Repeat("ab", 32)+".json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, "v"+fmt.Sprint(Format), ".tmp-123")
	if err := os.WriteFile(dead, []byte("half a pack"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleTemp)
	_ = os.Chtimes(dead, old, old)
	// Room for the two newest packs: the two oldest go, with the other format and
	// the leftover.
	for i := range packs {
		packs[i] = filepath.Join(dir, packs[i])
	}
	newest := int64(len(mustRead(t, packs[0])) + len(mustRead(t, packs[1])))
	removed, _, err := Prune(cdir(t, dir), newest, 0)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 4 {
		t.Errorf("removed %d, want 4 (two packs, the other format, the leftover)", removed)
	}
	for _, p := range []string{filepath.Join(dir, "v1"), dead, packs[2], packs[3]} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	runAt(func(s *Store) {
		for i := range 30 {
			_, ok := s.Get(key(i), Of(sent, nil))
			if want := i < 2 || i >= 20; ok != want {
				t.Errorf("answer %d: hit %v, want %v", i, ok, want)
			}
		}
	})
	// The newest run's pack alone (--runs 1), whatever the room: the run that read
	// wrote what it used to a pack of its own.
	before := len(packsIn(cdir(t, dir), versionDir()))
	if removed, _, _ := Prune(cdir(t, dir), 1<<30, 1); removed != before-1 || len(packsIn(cdir(t, dir), versionDir())) != 1 {
		t.Errorf("--runs 1 removed %d of %d packs, left %d", removed, before, len(packsIn(cdir(t, dir), versionDir())))
	}
	runAt(func(s *Store) {
		for i := range 30 {
			_, ok := s.Get(key(i), Of(sent, nil))
			if want := i < 2 || i >= 20; ok != want {
				t.Errorf("after --runs 1, answer %d: hit %v, want %v", i, ok, want)
			}
		}
	})
	if removed, _, _ := Prune(cdir(t, dir), 0, 0); removed == 0 || Size(cdir(t, dir)) != 0 {
		t.Errorf("prune to 0 removed %d, left %d bytes", removed, Size(cdir(t, dir)))
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestNumbersComeBackAsTheServerDecodesThem: an answer read from the cache holds its
// numbers as the API machinery decodes a server's JSON (int64 when whole, float64
// otherwise), so that it compares equal to the live object it is diffed against.
func TestNumbersComeBackAsTheServerDecodesThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	merged := &unstructured.Unstructured{}
	if err := merged.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80,"targetPort":8081}],"ratio":0.5}}`)); err != nil {
		t.Fatal(err)
	}
	run(t, dir, func(s *Store) { s.Put(baseKey(), Answer{Merged: merged}, Of()) })
	got, ok := Open(cdir(t, dir), build, secret).Get(baseKey(), Of())
	if !ok {
		t.Fatal("the answer was not stored")
	}
	if !reflect.DeepEqual(got.Merged.Object, merged.Object) {
		t.Errorf("got %#v\nwant %#v", got.Merged.Object, merged.Object)
	}
	port, _, _ := unstructured.NestedSlice(got.Merged.Object, "spec", "ports")
	if p := port[0].(map[string]any)["port"]; reflect.TypeOf(p) != reflect.TypeOf(int64(0)) {
		t.Errorf("port is a %T, want int64", p)
	}
}

// TestAnswersComeBackAsTheyWere: what the one-pass writer stores reads back as the
// object it was, whatever its strings and numbers: escapes, control characters,
// other scripts, whole and fractional floats, nesting.
func TestAnswersComeBackAsTheyWere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	merged := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "labels": map[string]any{"a/b": "x"}},
		"data": map[string]any{
			"quotes": `say "hi" \ back`, "control": "tab\there\nnul\x00bell\x07", "scripts": "héllo wörld 日本 🚀 \u2028",
			"html": "<a href='x'>&amp;</a>", "empty": "",
		},
		"spec": map[string]any{"int": int64(-42), "big": int64(1 << 53), "half": 0.5, "whole": float64(12), "exp": 1e21, "tiny": 1e-7,
			"yes": true, "no": false, "none": nil, "list": []any{int64(1), "two", []any{}, map[string]any{}}}}}
	run(t, dir, func(s *Store) { s.Put(baseKey(), Answer{Merged: merged}, Of()) })
	got, ok := Open(cdir(t, dir), build, secret).Get(baseKey(), Of())
	if !ok {
		t.Fatal("not stored")
	}
	if !reflect.DeepEqual(got.Merged.Object, merged.Object) {
		t.Errorf("got  %#v\nwant %#v", got.Merged.Object, merged.Object)
	}
	// Invalid UTF-8 comes back as encoding/json writes it; NaN is not stored.
	bad := obj(map[string]any{"bad": "a\xffb"})
	run(t, dir, func(s *Store) {
		s.Put(baseKey(), Answer{Merged: bad}, Of())
		k := baseKey()
		k.LiveResourceVersion = "nan"
		s.Put(k, Answer{Merged: obj(map[string]any{"n": math.NaN()})}, Of())
	})
	if got, ok := Open(cdir(t, dir), build, secret).Get(baseKey(), Of()); !ok || got.Merged.Object["data"].(map[string]any)["bad"] != "a\ufffdb" {
		t.Errorf("invalid UTF-8: %v %v", ok, got.Merged)
	}
	k := baseKey()
	k.LiveResourceVersion = "nan"
	if _, ok := Open(cdir(t, dir), build, secret).Get(k, Of()); ok {
		t.Error("a NaN was stored")
	}
}

// TestScansAreKeptPerRepositoryAndBuild: what discovery read of a repository's files
// comes back in the next run of the same build, for the same repository only; a
// damaged record is none.
func TestScansAreKeptPerRepositoryAndBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := func(c byte) string { return strings.Repeat(string(c), 40) }
	s := OpenScans(cdir(t, dir), build, "/repo/a")
	if _, ok := s.Scanned(id('a')); ok {
		t.Fatal("a scan before any run")
	}
	s.Remember(id('a'), discover.ScanNames)
	s.Remember(id('b'), discover.ScanPlain)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	again := OpenScans(cdir(t, dir), build, "/repo/a")
	if got, ok := again.Scanned(id('a')); !ok || got != discover.ScanNames {
		t.Errorf("a: %v %v", got, ok)
	}
	if got, ok := again.Scanned(id('b')); !ok || got != discover.ScanPlain {
		t.Errorf("b: %v %v", got, ok)
	}
	if _, ok := OpenScans(cdir(t, dir), build, "/repo/b").Scanned(id('a')); ok {
		t.Error("another repository's scan")
	}
	if _, ok := OpenScans(cdir(t, dir), "drift other", "/repo/a").Scanned(id('a')); ok {
		t.Error("another build's scan")
	}
	// A run that saw only a: b is forgotten.
	onlyA := OpenScans(cdir(t, dir), build, "/repo/a")
	onlyA.Scanned(id('a'))
	onlyA.Remember(id('c'), discover.ScanUnread)
	if err := onlyA.Save(); err != nil {
		t.Fatal(err)
	}
	if got, ok := OpenScans(cdir(t, dir), build, "/repo/a").Scanned(id('c')); !ok || got != discover.ScanUnread {
		t.Errorf("c: %v %v", got, ok)
	}
	if _, ok := OpenScans(cdir(t, dir), build, "/repo/a").Scanned(id('b')); ok {
		t.Error("a scan the last run did not see")
	}
	files := files(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if err := os.WriteFile(files[0], append(mustRead(t, files[0]), "zz 9\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := OpenScans(cdir(t, dir), build, "/repo/a").Scanned(id('a')); ok {
		t.Error("a damaged record was read")
	}
}

// cdir is the cache directory at dir as a run opens it, with its key beside it.
func cdir(t *testing.T, dir string) *cachedir.Dir {
	t.Helper()
	d, err := cachedir.Open(cachedir.Options{Getenv: func(k string) string {
		if k == "DRIFT_CACHE_DIR" {
			return dir
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// keyedDir is the cache directory at dir with its key at keyFile.
func keyedDir(t *testing.T, dir, keyFile string) *cachedir.Dir {
	t.Helper()
	d, err := cachedir.Open(cachedir.Options{Getenv: func(k string) string {
		return map[string]string{"DRIFT_CACHE_DIR": dir, cachedir.KeyEnv: keyFile}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestWhatAnotherKeyWroteIsAMiss: packs, scans and clusters' records that drift did
// not write with this cache's key (planted by a change, restored from elsewhere) are
// never answers, even when they are whole and of this format and build.
func TestWhatAnotherKeyWroteIsAMiss(t *testing.T) {
	t.Parallel()
	dir, keys := t.TempDir(), t.TempDir()
	theirs := keyedDir(t, dir, filepath.Join(keys, "theirs.key"))
	sent := obj(map[string]any{"a": "b"})
	s := Open(theirs, build, secret)
	s.Put(baseKey(), Answer{Merged: obj(map[string]any{"a": "forged"})}, Of(sent, nil))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sc := OpenScans(theirs, build, "/repo/a")
	sc.Remember(strings.Repeat("a", 40), discover.ScanPlain)
	if err := sc.Save(); err != nil {
		t.Fatal(err)
	}
	// Discovery's memo as the format says, without a seal at all.
	plain := filepath.Join(dir, versionDir(), "scans", hashOf("/repo/b")[:32]+".txt")
	if err := os.WriteFile(plain, []byte(scansMagic+build+"\n"+strings.Repeat("b", 40)+" 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	ours := keyedDir(t, dir, filepath.Join(keys, "ours.key"))
	var notes []string
	mine := Open(ours, build, secret)
	mine.Notef = func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	if got, ok := mine.Get(baseKey(), Of(sent, nil)); ok {
		t.Errorf("another key's answer was used: %v", got.Merged)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "not written by drift with this cache's key") {
		t.Errorf("notes %q", notes)
	}
	_ = mine.Close()
	if _, ok := OpenScans(ours, build, "/repo/a").Scanned(strings.Repeat("a", 40)); ok {
		t.Error("another key's scan was used")
	}
	if _, ok := OpenScans(ours, build, "/repo/b").Scanned(strings.Repeat("b", 40)); ok {
		t.Error("an unsealed scan was used")
	}
	// The same key reads them: the test plants what drift would read.
	if _, ok := OpenScans(keyedDir(t, dir, filepath.Join(keys, "theirs.key")), build, "/repo/a").Scanned(strings.Repeat("a", 40)); !ok {
		t.Error("the key that wrote the scan cannot read it")
	}
}

// TestASecretIsStoredAsAKeyedHash: a secret string is stored as a hash no one without
// the cache's key can compute: not its SHA-256, nor that of its base64.
func TestASecretIsStoredAsAKeyedHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sent := obj(map[string]any{"url": password})
	run(t, dir, func(s *Store) { s.Put(baseKey(), Answer{Merged: obj(map[string]any{"url": password})}, Of(sent, nil)) })
	stored := files(t, dir)
	if len(stored) != 1 {
		t.Fatalf("stored %q", stored)
	}
	data := string(mustRead(t, stored[0]))
	if !strings.Contains(data, `drift-secret:hmac-sha256:`) {
		t.Fatalf("no placeholder in the pack:\n%q", data)
	}
	for _, v := range []string{password, base64.StdEncoding.EncodeToString([]byte(password))} {
		if strings.Contains(data, hashOf(v)) {
			t.Errorf("the pack holds the SHA-256 of %q", v)
		}
	}
	run(t, dir, func(s *Store) {
		if got, ok := s.Get(baseKey(), Of(sent, nil)); !ok || got.Merged.Object["data"].(map[string]any)["url"] != password {
			t.Errorf("got %v %v", ok, got.Merged)
		}
	})
}
