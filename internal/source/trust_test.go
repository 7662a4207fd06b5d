package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// fakeToken is what actions/checkout leaves in .git/config: an extraheader with the
// base64 of x-access-token:<token>.
const fakeExtraheader = "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX0ZBS0VUT0tFTjEyMw==\n"

// TestWorkTreeNeverReadsGitIgnoredFilesOrNestedRepositories names .git, ignored files
// and a nested repository every way a renderer can: directly, through symlinks to
// them and to their directories. Every access fails as not the repository's content,
// and the repository's own files still read.
func TestWorkTreeNeverReadsGitIgnoredFilesOrNestedRepositories(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	must(t, err)
	_, err = r.CommitFiles(map[string]string{".gitignore": "secrets.env\nbuild/\n", "apps/.gitignore": "local.yaml\n", "apps/a.yaml": "a: 1\n"}, "base")
	must(t, err)
	must(t, r.Write(map[string]string{
		".git/info/exclude":     "excluded.env\n",
		"excluded.env":          "KEY=1\n",
		"apps/local.yaml":       "l: 1\n",
		"secrets.env":           "PASSWORD=hunter2\n",
		"build/out.yaml":        "b: 1\n",
		"vendor/sub/.git/HEAD":  "ref: refs/heads/main\n",
		"vendor/sub/x.yaml":     "x: 1\n",
		"apps/nested/.git":      "gitdir: ../../.git/modules/nested\n",
		"apps/nested/y.yaml":    "y: 1\n",
		"apps/deep/inside.yaml": "z: 1\n",
	}))
	f, err := os.OpenFile(filepath.Join(r.Dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(fakeExtraheader)
	must(t, err)
	must(t, f.Close())
	for link, dest := range map[string]string{
		"leak": ".git/config", "dirlink": ".git", "ign": "secrets.env", "buildlink": "build",
		"apps/up": "../.git/config", "sublink": "vendor/sub", "apps/ok": "deep",
		".git/hooks/link": "../config", "apps/loc": "local.yaml", "exc": "excluded.env",
	} {
		must(t, os.Symlink(dest, filepath.Join(r.Dir, filepath.FromSlash(link))))
	}
	repo, err := Open(r.Dir)
	must(t, err)
	snap, err := repo.Snapshot("")
	must(t, err)

	// Files read first: the directories on their way are remembered, and what is
	// refused under them stays refused.
	for _, name := range []string{"apps/a.yaml", "apps/deep/inside.yaml", "apps/ok/inside.yaml"} {
		if _, err := fs.ReadFile(snap.FS, name); err != nil {
			t.Errorf("ReadFile(%s): %v", name, err)
		}
	}
	for _, name := range []string{
		".git/config", "leak", "dirlink", "dirlink/config", "ign", "secrets.env", "build/out.yaml",
		"buildlink/out.yaml", "apps/up", "vendor/sub/x.yaml", "sublink/x.yaml", "apps/nested/y.yaml",
		"apps/local.yaml", "apps/loc", "excluded.env", "exc", "dirlink/hooks/link",
	} {
		if data, err := fs.ReadFile(snap.FS, name); !errors.Is(err, ErrNotOwnContent) || strings.Contains(string(data), "extraheader") {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrNotOwnContent", name, data, err)
		}
		if _, err := fs.Stat(snap.FS, name); !errors.Is(err, ErrNotOwnContent) {
			t.Errorf("Stat(%s): %v; want ErrNotOwnContent", name, err)
		}
		if f, err := snap.FS.Open(name); !errors.Is(err, ErrNotOwnContent) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%s): %v; want ErrNotOwnContent", name, err)
		}
		if !IsOutside(&fs.PathError{Op: "read", Path: name, Err: ErrNotOwnContent}) {
			t.Errorf("IsOutside does not recognise %s's error", name)
		}
	}
	// ReadLink gives a link's own text, but never of a link inside what is refused.
	for _, name := range []string{".git/hooks/link", "dirlink/hooks/link", "sublink/.git"} {
		if dest, err := snap.FS.(interface{ ReadLink(string) (string, error) }).ReadLink(name); !errors.Is(err, ErrNotOwnContent) {
			t.Errorf("ReadLink(%s) = %q, %v; want ErrNotOwnContent", name, dest, err)
		}
	}
	if dest, err := snap.FS.(interface{ ReadLink(string) (string, error) }).ReadLink("apps/ok"); err != nil || dest != "deep" {
		t.Errorf("ReadLink(apps/ok) = %q, %v", dest, err)
	}
	for _, dir := range []string{".git", "dirlink", "build", "buildlink", "vendor/sub", "sublink", "apps/nested"} {
		if _, err := fs.ReadDir(snap.FS, dir); !errors.Is(err, ErrNotOwnContent) {
			t.Errorf("ReadDir(%s): %v; want ErrNotOwnContent", dir, err)
		}
	}
	for _, name := range []string{"apps/a.yaml", "apps/ok/inside.yaml", "apps/deep/inside.yaml"} {
		if _, err := fs.ReadFile(snap.FS, name); err != nil {
			t.Errorf("ReadFile(%s): %v", name, err)
		}
	}
	if real, err := snap.FS.(interface{ RealPath(string) (string, error) }).RealPath("apps/ok/inside.yaml"); err != nil || real != "apps/deep/inside.yaml" {
		t.Errorf("RealPath = %q, %v", real, err)
	}
	entries, err := fs.ReadDir(snap.FS, ".")
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); strings.Contains(got, ".git ") || strings.Contains(got, "secrets.env") || strings.Contains(got, "build ") || strings.Contains(got, "excluded.env") {
		t.Errorf("the root lists %s", got)
	}
}

// TestSubmodulesAreNamedNotSkipped: a commit with a submodule lists it, and reading it
// fails with a message naming it, so a renderer reports it instead of losing its files.
func TestSubmodulesAreNamedNotSkipped(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	must(t, err)
	sha, err := r.CommitFiles(map[string]string{"apps/a.yaml": "a: 1\n"}, "base")
	must(t, err)
	_, err = r.Git("update-index", "--add", "--cacheinfo", "160000,"+sha+",apps/lib")
	must(t, err)
	_, err = r.Git("commit", "-q", "-m", "submodule")
	must(t, err)
	repo, err := Open(r.Dir)
	must(t, err)
	snap, err := repo.Snapshot("HEAD")
	must(t, err)
	entries, err := fs.ReadDir(snap.FS, "apps")
	must(t, err)
	if len(entries) != 2 || entries[1].Name() != "lib" || !entries[1].IsDir() {
		t.Fatalf("apps lists %v, want a.yaml and the submodule lib", entries)
	}
	_, err = fs.ReadDir(snap.FS, "apps/lib")
	if !errors.Is(err, ErrNotOwnContent) || !strings.Contains(err.Error(), "apps/lib is a git submodule (commit "+sha[:12]+")") {
		t.Errorf("ReadDir(apps/lib): %v", err)
	}
	base, err := repo.Snapshot("HEAD~1")
	must(t, err)
	if changed, err := Files(base, snap); err != nil || len(changed) != 0 {
		t.Errorf("Files = %v, %v", changed, err)
	}
}
