package resultcache

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// TestAnAnswerComesBackWithoutItsSecretsStored: a prediction holding a Secret value
// (substituted from a Secret into the object sent) is stored with the value's hash
// only, in no form a reader could find, and comes back whole.
func TestAnAnswerComesBackWithoutItsSecretsStored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := Open(dir, secret)
	sent := obj(map[string]any{"url": "postgres://app:" + password + "@db"})
	merged := obj(map[string]any{"url": "postgres://app:" + password + "@db", "server": "default"})
	merged.SetResourceVersion("42")
	s.Put(baseKey(), Answer{Merged: merged, Warnings: []string{"deprecated"}}, sent, nil)
	files := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, _ := os.ReadFile(p)
		for _, form := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), base64.StdEncoding.EncodeToString([]byte("postgres://app:" + password + "@db"))} {
			if strings.Contains(string(data), form) {
				t.Errorf("the entry holds the secret as %q", form)
			}
		}
		return nil
	})
	if files != 1 {
		t.Fatalf("%d files stored, want 1", files)
	}
	got, ok := Open(dir, secret).Get(baseKey(), sent, nil)
	if !ok || !reflect.DeepEqual(got.Merged.Object, merged.Object) || !reflect.DeepEqual(got.Warnings, []string{"deprecated"}) {
		t.Errorf("got %v %+v, want the answer back", ok, got)
	}
	// Another key misses.
	k := baseKey()
	k.LiveResourceVersion = "43"
	if _, ok := s.Get(k, sent, nil); ok {
		t.Error("another resourceVersion hits")
	}
}

// TestASecretOnlyTheServerKnowsIsNeverStored: a value the answer holds that neither
// the object sent nor the live one does (a mutating webhook's) cannot be restored, so
// nothing is stored.
func TestASecretOnlyTheServerKnowsIsNeverStored(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := Open(dir, secret)
	s.Put(baseKey(), Answer{Merged: obj(map[string]any{"injected": password})}, obj(nil), nil)
	if n := Size(dir); n != 0 {
		t.Errorf("%d bytes stored", n)
	}
	if _, ok := s.Get(baseKey(), obj(nil), nil); ok {
		t.Error("a hit")
	}
}

// TestBrokenEntriesAreMissesWithANote: a truncated entry, one of another format and
// an unwritable directory each make the cache say so once and answer nothing.
func TestBrokenEntriesAreMissesWithANote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var notes []string
	s := Open(dir, secret)
	s.Notef = func(format string, args ...any) { notes = append(notes, format) }
	sent := obj(map[string]any{"a": "b"})
	s.Put(baseKey(), Answer{Merged: obj(map[string]any{"a": "b"})}, sent, nil)
	p := s.path(baseKey().Digest())
	data, _ := os.ReadFile(p)
	for name, broken := range map[string][]byte{
		"truncated":      data[:len(data)/2],
		"another format": []byte(strings.Replace(string(data), `"format":1`, `"format":99`, 1)),
		"not JSON":       []byte("\x00\x01"),
	} {
		if err := os.WriteFile(p, broken, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Get(baseKey(), sent, nil); ok {
			t.Errorf("%s: a hit", name)
		}
	}
	if len(notes) != 1 {
		t.Errorf("notes %q, want one", notes)
	}

	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.WriteFile(ro, nil, 0o600); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	s2 := Open(ro, secret)
	var wrote []string
	s2.Notef = func(format string, args ...any) { wrote = append(wrote, format) }
	s2.Put(baseKey(), Answer{Merged: obj(nil)}, sent, nil)
	s2.Put(baseKey(), Answer{Merged: obj(nil)}, sent, nil)
	if len(wrote) != 1 || !strings.Contains(wrote[0], "cannot be written") {
		t.Errorf("unwritable: notes %q", wrote)
	}
}

// TestPruneKeepsTheRecentlyUsed: past the size, the least recently used entries go,
// and entries of another format go whatever their age.
func TestPruneKeepsTheRecentlyUsed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := Open(dir, secret)
	clock := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return clock }
	sent := obj(map[string]any{"a": "b"})
	var keys []Key
	for i := range 10 {
		k := baseKey()
		k.LiveResourceVersion = string(rune('a' + i))
		keys = append(keys, k)
		s.Put(k, Answer{Merged: obj(map[string]any{"a": strings.Repeat("x", 1000)})}, sent, nil)
		p := s.path(k.Digest())
		old := clock.Add(time.Duration(i) * time.Minute)
		_ = os.Chtimes(p, old, old)
	}
	// The oldest is used again: it stays.
	clock = clock.Add(time.Hour)
	if _, ok := s.Get(keys[0], sent, nil); !ok {
		t.Fatal("miss")
	}
	other := filepath.Join(dir, "v0", "ab")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "x.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	each := int64(len(mustRead(t, s.path(keys[0].Digest()))))
	removed, _, err := Prune(dir, 3*each)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 8 { // seven entries and the other format's directory
		t.Errorf("removed %d, want 8", removed)
	}
	for i, k := range keys {
		_, err := os.Stat(s.path(k.Digest()))
		if kept := err == nil; kept != (i == 0 || i >= 8) {
			t.Errorf("entry %d kept %v", i, kept)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "v0")); err == nil {
		t.Error("the other format's entries are still there")
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
	s := Open(dir, secret)
	merged := &unstructured.Unstructured{}
	if err := merged.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80,"targetPort":8081}],"ratio":0.5}}`)); err != nil {
		t.Fatal(err)
	}
	s.Put(baseKey(), Answer{Merged: merged}, nil)
	got, ok := Open(dir, secret).Get(baseKey())
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
