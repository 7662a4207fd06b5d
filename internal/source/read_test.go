package source

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// BenchmarkReadTree reads every file of a commit with 10 directories of 1,000
// manifests each, as the plain renderer does: walk, then read each file.
const benchDirs = 10

// committed is a repository opened after one commit of files.
func committed(tb testing.TB, files map[string]string) *Repo {
	tb.Helper()
	r, err := gitfixture.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := r.CommitFiles(files, "files"); err != nil {
		tb.Fatal(err)
	}
	repo, err := Open(r.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	return repo
}

// readAll reads every file below root; check, when set, sees each one's content.
func readAll(fsys fs.FS, root string, check func(name string, data []byte) error) (int, error) {
	n := 0
	err := fs.WalkDir(fsys, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(name, data); err != nil {
				return err
			}
		}
		n++
		return nil
	})
	return n, err
}

func BenchmarkReadTree(b *testing.B) {
	files := map[string]string{}
	for d := 0; d < benchDirs; d++ {
		for i := 0; i < 10000/benchDirs; i++ {
			files[fmt.Sprintf("apps/ns-%d/cm-%04d.yaml", d, i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\n", i)
		}
	}
	repo := committed(b, files)
	b.ResetTimer()
	for range b.N {
		snap, err := repo.Snapshot("HEAD")
		if err != nil {
			b.Fatal(err)
		}
		n, err := readAll(snap.FS, ".", nil)
		if err != nil || n != 10000 {
			b.Fatalf("read %d files: %v", n, err)
		}
	}
}

// Reading every file of a directory of 1,000 files, two levels down, decodes each
// of the commit's trees once (go-git's own lookup decoded every directory on the way
// for each file: 1,000 times each here, quadratic in the directory's size).
func TestReadingADirectoryDecodesEachTreeOnce(t *testing.T) {
	t.Parallel()
	files := map[string]string{"other/x.yaml": "x: 1\n"}
	for i := range 1000 {
		files[fmt.Sprintf("apps/big/f%04d.yaml", i)] = fmt.Sprintf("n: %d\n", i)
	}
	repo := committed(t, files)
	snap, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	read, err := readAll(snap.FS, "apps", nil)
	if err != nil || read != 1000 {
		t.Fatalf("read %d files: %v", read, err)
	}
	// The root, apps and apps/big: three trees, however many files.
	if got := repo.objects.decodes.Load(); got > 3 {
		t.Errorf("%d tree decodes to read 1,000 files of one directory, want at most 3 (one per tree)", got)
	}
}

// Listing a directory reads no blob: a walk that needs only names and object ids
// (discovery's scan, answered from its memo) costs the trees alone. A file's size is
// read when its Info is asked for.
func TestListingADirectoryReadsNoBlob(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("apps/f%03d.yaml", i)] = strings.Repeat("x", i+1)
	}
	repo := committed(t, files)
	snap, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(snap.FS, "apps")
	if err != nil || len(entries) != 100 {
		t.Fatalf("ReadDir(apps): %d entries, %v", len(entries), err)
	}
	if got := repo.objects.reads.Load(); got != 0 {
		t.Errorf("listing 100 files read %d blobs, want none", got)
	}
	info, err := entries[42].Info()
	if err != nil || info.Name() != "f042.yaml" || info.Size() != 43 || info.IsDir() || !entries[42].Type().IsRegular() {
		t.Errorf("Info of %s: %v (size %d), %v; want f042.yaml, a regular file of 43 bytes", entries[42].Name(), info, info.Size(), err)
	}
	if got := repo.objects.reads.Load(); got != 1 {
		t.Errorf("one Info read %d blobs, want 1", got)
	}
}

// Forget empties what the repository keeps of what was read; a snapshot taken before
// reads the same files after it, from disk again.
func TestForgetKeepsSnapshotsReadable(t *testing.T) {
	t.Parallel()
	repo := committed(t, map[string]string{"apps/a.yaml": "a: 1\n", "apps/b.yaml": "b: 2\n"})
	snap, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(snap.FS, "apps/a.yaml"); err != nil || string(data) != "a: 1\n" {
		t.Fatalf("before: %q, %v", data, err)
	}
	decoded := repo.objects.decodes.Load()
	repo.Forget()
	if n := len(repo.objects.trees); n != 0 {
		t.Errorf("%d trees kept after Forget", n)
	}
	if data, err := fs.ReadFile(snap.FS, "apps/a.yaml"); err != nil || string(data) != "a: 1\n" {
		t.Errorf("after: %q, %v", data, err)
	}
	if entries, err := fs.ReadDir(snap.FS, "apps"); err != nil || len(entries) != 2 {
		t.Errorf("after: %d entries, %v", len(entries), err)
	}
	if repo.objects.decodes.Load() <= decoded {
		t.Error("no tree was decoded again after Forget")
	}
}

// TestConcurrentReadsSeeOneTree reads a commit from several goroutines at once, as
// targets rendering in parallel do: every reader sees every file with its content.
// (Run with -race, it also checks the tree cache's locking.)
func TestConcurrentReadsSeeOneTree(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 200; i++ {
		files[fmt.Sprintf("d%d/sub/f%03d.yaml", i%7, i)] = fmt.Sprintf("n: %d\n", i)
	}
	repo := committed(t, files)
	snap, err := repo.Snapshot("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			seen, err := readAll(snap.FS, ".", func(name string, data []byte) error {
				if string(data) != files[name] {
					return fmt.Errorf("%s: read %q, want %q", name, data, files[name])
				}
				return nil
			})
			if err == nil && seen != len(files) {
				err = fmt.Errorf("saw %d files, want %d", seen, len(files))
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestSizesFromPacksAndLooseObjects: a file's size is read from its object's header,
// a delta's from the delta, without reading the file: the same as its content's
// length, loose or packed.
func TestSizesFromPacksAndLooseObjects(t *testing.T) {
	t.Parallel()
	r, err := gitfixture.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	body := ""
	for i := range 200 {
		body += fmt.Sprintf("line %d of a file git stores as a delta of the next\n", i)
	}
	if _, err := r.CommitFiles(map[string]string{"a.yaml": body, "b.yaml": "short\n"}, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitFiles(map[string]string{"a.yaml": body + "one more line\n"}, "two"); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		repo, err := Open(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{"HEAD", "HEAD~1"} {
			snap, err := repo.Snapshot(ref)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := readAll(snap.FS, ".", func(name string, data []byte) error {
				info, err := fs.Stat(snap.FS, name)
				if err != nil || info.Size() != int64(len(data)) {
					return fmt.Errorf("%s %s at %s: size %v, %d bytes read (%v)", when, name, ref, info.Size(), len(data), err)
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
		}
	}
	check("loose")
	if out, err := r.Git("gc", "-q", "--aggressive"); err != nil {
		t.Fatalf("git gc: %v\n%s", err, out)
	}
	check("packed")
}
