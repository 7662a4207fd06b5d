package cachedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DRIFT_CACHE_DIR": "/d", "XDG_CACHE_HOME": "/x"}, "/d/charts"},
		{map[string]string{"XDG_CACHE_HOME": "/x"}, "/x/drift/charts"},
		{nil, filepath.Join(home, ".cache", "drift", "charts")},
	} {
		if got := Path(func(k string) string { return c.env[k] }, "charts"); got != c.want {
			t.Errorf("%v: %s, want %s", c.env, got, c.want)
		}
	}
}

// env is a Getenv of m.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestOpenRefusesWhatIsNotDriftsOwn: a cache directory or key inside the repository
// being previewed, a cache directory that is a symbolic link, a key inside the cache,
// and files reached through links are refused, each saying why.
func TestOpenRefusesWhatIsNotDriftsOwn(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo := filepath.Join(root, "checkout")
	if err := os.MkdirAll(repo, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "elsewhere")
	if err := os.Symlink(repo, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		env  map[string]string
		want string
	}{
		"in the repository":         {map[string]string{"DRIFT_CACHE_DIR": filepath.Join(repo, ".drift-cache")}, "inside the repository"},
		"in it through a link":      {map[string]string{"DRIFT_CACHE_DIR": filepath.Join(outside, "cache")}, "inside the repository"},
		"its key in the repository": {map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "c1"), KeyEnv: filepath.Join(repo, "k")}, "inside the repository"},
		"its key inside it":         {map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "c2"), KeyEnv: filepath.Join(root, "c2", "k")}, "inside the cache directory"},
		"a link":                    {map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "linked")}, "symbolic link"},
	} {
		_, err := Open(Options{Getenv: env(c.env), Repository: repo})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}

	d, err := Open(Options{Getenv: env(map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "cache")}), Repository: repo})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("a/b.txt", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if got, err := d.ReadFile("a/b.txt"); err != nil || string(got) != "mine" {
		t.Fatalf("read back %q %v", got, err)
	}
	secret := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(secret, []byte("not drift's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, d.Join("a/link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, d.Join("up")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"a/link.txt", "up/secret.txt", "../secret.txt", "a/../../secret.txt", "/etc/passwd"} {
		if got, err := d.ReadFile(rel); err == nil {
			t.Errorf("%s was read: %q", rel, got)
		}
	}
	if err := d.Remove("a/link.txt"); err == nil {
		t.Error("a link was removed")
	}
	if err := d.WriteFile("up/planted", []byte("x")); err == nil {
		t.Error("a file was written through a link")
	}
	if _, err := os.Stat(filepath.Join(root, "planted")); err == nil {
		t.Error("a file was written outside the cache")
	}
}

// TestSealedFilesAreDriftsOwn: what WriteSealed wrote comes back; the same bytes
// under another name, with a changed byte, without a seal or under another key are
// ErrNotSealed.
func TestSealedFilesAreDriftsOwn(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	open := func(key string) *Dir {
		d, err := Open(Options{Getenv: env(map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "cache"), KeyEnv: filepath.Join(root, key)})})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := open("one.key")
	if err := d.WriteSealed("refs/a.json", []byte(`{"digest":"aa"}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := d.ReadSealed("refs/a.json"); err != nil || string(got) != `{"digest":"aa"}` {
		t.Fatalf("read back %q %v", got, err)
	}
	raw, err := d.ReadFile("refs/a.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func() error{
		"moved":      func() error { return d.WriteFile("refs/b.json", raw) },
		"changed":    func() error { return d.WriteFile("refs/b.json", []byte(strings.Replace(string(raw), "aa", "ab", 1))) },
		"not sealed": func() error { return d.WriteFile("refs/b.json", []byte(`{"digest":"aa"}`)) },
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ReadSealed("refs/b.json"); !errors.Is(err, ErrNotSealed) {
			t.Errorf("%s: %v, want ErrNotSealed", name, err)
		}
	}
	if _, err := open("two.key").ReadSealed("refs/a.json"); !errors.Is(err, ErrNotSealed) {
		t.Errorf("another key: %v, want ErrNotSealed", err)
	}
	// The directory restored elsewhere with its key (the GitLab component's new
	// directory of each job) is still drift's.
	elsewhere, err := Open(Options{Getenv: env(map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "restored"), KeyEnv: filepath.Join(root, "one.key")})})
	if err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.WriteFile("refs/a.json", raw); err != nil {
		t.Fatal(err)
	}
	if got, err := elsewhere.ReadSealed("refs/a.json"); err != nil || string(got) != `{"digest":"aa"}` {
		t.Errorf("restored elsewhere: %q %v", got, err)
	}
	// The key is made once, for the user alone, and read again.
	info, err := os.Stat(filepath.Join(root, "one.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key: %v %v", info, err)
	}
	if _, err := open("one.key").ReadSealed("refs/a.json"); err != nil {
		t.Errorf("the key read again: %v", err)
	}
	if err := os.Chmod(filepath.Join(root, "one.key"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Getenv: env(map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "cache"), KeyEnv: filepath.Join(root, "one.key")})}); err == nil || !strings.Contains(err.Error(), "other users") {
		t.Errorf("a key others may write: %v", err)
	}
}

// TestFilesOfAnotherUserAreRefused: run as root (as CI containers run), a file
// another user owns is not read.
func TestFilesOfAnotherUserAreRefused(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	root := t.TempDir()
	d, err := Open(Options{Getenv: env(map[string]string{"DRIFT_CACHE_DIR": filepath.Join(root, "cache")})})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d.Join("x"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFile("x"); err == nil || !strings.Contains(err.Error(), "not owned by the user running drift") {
		t.Errorf("another user's file: %v", err)
	}
	if err := os.Chown(d.Path(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Getenv: env(map[string]string{"DRIFT_CACHE_DIR": d.Path()})}); err == nil || !strings.Contains(err.Error(), "not owned") {
		t.Errorf("another user's directory: %v", err)
	}
}
