package ephemeral

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLeftoversOfGoneDriftsAreRemovedAndNothingElse(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	now := time.Now()
	mkdir := func(name string, withLock bool) string {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "etcd.db"), []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
		if withLock {
			if err := os.WriteFile(filepath.Join(dir, lockName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	age := func(dir string, d time.Duration) {
		t.Helper()
		if err := os.Chtimes(dir, now.Add(-d), now.Add(-d)); err != nil {
			t.Fatal(err)
		}
	}

	live := mkdir(runPrefix+"live", false)
	unlock, err := lock(filepath.Join(live, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	liveStaging := mkdir(stagingPrefix+"live", false)
	unlockStaging, err := lock(filepath.Join(liveStaging, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer unlockStaging()
	age(liveStaging, time.Hour)

	killed := mkdir(runPrefix+"killed", true) // its drift's lock was released at exit
	cutShort := mkdir(runPrefix+"cut", false) // a removal that took the lock file first
	newStaging := mkdir(stagingPrefix+"new", false)
	oldStaging := mkdir(stagingPrefix+"old", false)
	age(oldStaging, 2*stagingGrace)
	unrelated := mkdir("other-tool-dir", true)
	target := mkdir("target-of-link", true)
	link := filepath.Join(tmp, runPrefix+"link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tmp, runPrefix+"file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	if err := removeLeftovers(tmp, now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		kept bool
	}{
		{live, true}, {liveStaging, true}, {newStaging, true}, {unrelated, true},
		{link, true}, {filepath.Join(target, "etcd.db"), true}, {file, true},
		{killed, false}, {cutShort, false}, {oldStaging, false},
	} {
		_, err := os.Lstat(c.path)
		if kept := err == nil; kept != c.kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(c.path), kept, c.kept)
		}
	}
}

func TestRunDirIsLockedUnderItsFinalNameAndRemovedWithItsLock(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	d, err := newRunDir()
	if err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(tmp)
	if len(names) != 1 || !strings.HasPrefix(names[0].Name(), runPrefix) || filepath.Join(tmp, names[0].Name()) != d.path {
		t.Fatalf("want only %s, got %v", d.path, names)
	}
	if err := removeLeftovers(tmp, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.path, lockName)); err != nil {
		t.Fatalf("another start removed a running server's directory: %v", err)
	}
	if err := d.remove(); err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(tmp); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}
