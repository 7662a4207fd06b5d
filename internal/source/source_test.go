package source

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// newRepo builds: c1 (a.yaml=v1), c2 (a.yaml=v2, tag v0.2 annotated, tag light),
// c3 (a.yaml=v3, branch main); origin/main at c2, refs/pull/7/merge at c1, and a
// branch feature at c1.
func newRepo(t *testing.T) (*gitfixture.Repo, []string) {
	t.Helper()
	r, err := gitfixture.Init(t.TempDir())
	must(t, err)
	var commits []string
	for _, v := range []string{"v1", "v2", "v3"} {
		sha, err := r.CommitFiles(map[string]string{"apps/a.yaml": "version: " + v + "\n"}, "commit "+v)
		must(t, err)
		commits = append(commits, sha)
	}
	for _, args := range [][]string{
		{"tag", "-a", "v0.2", "-m", "release", commits[1]},
		{"tag", "light", commits[1]},
		{"update-ref", "refs/remotes/origin/main", commits[1]},
		{"update-ref", "refs/pull/7/merge", commits[0]},
		{"branch", "feature", commits[0]},
	} {
		_, err := r.Git(args...)
		must(t, err)
	}
	return r, commits
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestResolveEveryRefForm(t *testing.T) {
	r, commits := newRepo(t)
	repo, err := Open(r.Dir)
	must(t, err)
	cases := map[string]int{
		"main":              2,
		"HEAD":              2,
		"origin/main":       1,
		"v0.2":              1,
		"light":             1,
		"feature":           0,
		commits[0]:          0,
		commits[1][:7]:      1,
		"HEAD~2":            0,
		"main^":             1,
		"refs/pull/7/merge": 0,
		"refs/heads/main":   2,
	}
	for ref, want := range cases {
		t.Run(ref, func(t *testing.T) {
			snap, err := repo.Snapshot(ref)
			must(t, err)
			if snap.Commit != commits[want] {
				t.Fatalf("ref %s resolved to %s, want commit %d (%s)", ref, snap.Commit, want, commits[want])
			}
			data, err := fs.ReadFile(snap.FS, "apps/a.yaml")
			must(t, err)
			if wantData := []string{"version: v1\n", "version: v2\n", "version: v3\n"}[want]; string(data) != wantData {
				t.Fatalf("ref %s: apps/a.yaml = %q, want %q", ref, data, wantData)
			}
		})
	}
}

func TestUnknownRefSuggestsCloseRefs(t *testing.T) {
	r, _ := newRepo(t)
	repo, err := Open(r.Dir)
	must(t, err)
	_, err = repo.Snapshot("mian")
	if err == nil || !strings.Contains(err.Error(), `unknown ref "mian"`) || !strings.Contains(err.Error(), "main") {
		t.Fatalf("want an unknown ref error suggesting main, got %v", err)
	}
	_, err = repo.Snapshot("featur")
	if err == nil || !strings.Contains(err.Error(), "feature") {
		t.Fatalf("want a suggestion of feature, got %v", err)
	}
	_, err = repo.Snapshot("zzzzzzzzzzzzzz")
	if err == nil || !strings.Contains(err.Error(), "git fetch") {
		t.Fatalf("want advice to fetch, got %v", err)
	}
}

func TestNotARepository(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "is not in a git repository") {
		t.Fatalf("got %v", err)
	}
}

func TestOpenFromSubdirectoryAndPaths(t *testing.T) {
	r, _ := newRepo(t)
	repo, err := Open(filepath.Join(r.Dir, "apps"))
	must(t, err)
	if repo.Dir != "apps" {
		t.Fatalf("Dir = %q, want apps", repo.Dir)
	}
	p, err := repo.Path("a.yaml")
	must(t, err)
	if p != "apps/a.yaml" {
		t.Fatalf("Path = %q", p)
	}
	if _, err := repo.Path("../../etc"); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Fatalf("want outside error, got %v", err)
	}
	snap, err := repo.Snapshot("main")
	must(t, err)
	if err := snap.CheckPaths([]string{"apps/missing"}); err == nil || !strings.Contains(err.Error(), "apps/missing is not in commit") {
		t.Fatalf("want path not in tree error, got %v", err)
	}
	must(t, snap.CheckPaths([]string{"apps", ""}))
}

func TestWorkTreeIncludesUncommittedEditsNotIgnoredFiles(t *testing.T) {
	r, _ := newRepo(t)
	must(t, r.Write(map[string]string{
		"apps/a.yaml":     "version: edited\n",
		"apps/new.yaml":   "x: 1\n",
		".gitignore":      "build/\n*.tmp.yaml\n",
		"build/out.yaml":  "x: 2\n",
		"apps/x.tmp.yaml": "x: 3\n",
	}))
	repo, err := Open(r.Dir)
	must(t, err)
	wt, err := repo.Snapshot("")
	must(t, err)
	if wt.Commit != "" || wt.Describe() != "the work tree" {
		t.Fatalf("work tree snapshot has commit %q", wt.Commit)
	}
	data, err := fs.ReadFile(wt.FS, "apps/a.yaml")
	must(t, err)
	if string(data) != "version: edited\n" {
		t.Fatalf("work tree read %q", data)
	}
	var names []string
	must(t, fs.WalkDir(wt.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	}))
	got := strings.Join(names, ",")
	if got != ".gitignore,apps/a.yaml,apps/new.yaml" {
		t.Fatalf("work tree files = %s", got)
	}
	head, err := repo.Snapshot("HEAD")
	must(t, err)
	data, err = fs.ReadFile(head.FS, "apps/a.yaml")
	must(t, err)
	if string(data) != "version: v3\n" {
		t.Fatalf("commit read %q", data)
	}
	if _, err := fs.Stat(head.FS, "apps/new.yaml"); err == nil {
		t.Fatal("an uncommitted file is visible in the commit")
	}
}

func TestSymlinksStayInsideTheRepository(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	must(t, os.WriteFile(outside, []byte("stolen: true\n"), 0o644))
	r, err := gitfixture.Init(t.TempDir())
	must(t, err)
	must(t, r.Write(map[string]string{"base/cm.yaml": "kind: x\n"}))
	must(t, os.Symlink("../base/cm.yaml", filepath.Join(r.Dir, "inside.yaml")))
	must(t, os.Symlink("base", filepath.Join(r.Dir, "linkdir")))
	must(t, os.Symlink(outside, filepath.Join(r.Dir, "abs.yaml")))
	must(t, os.Symlink("../../../../../../../../"+outside, filepath.Join(r.Dir, "rel.yaml")))
	_, err = r.Commit("links")
	must(t, err)
	must(t, os.Remove(filepath.Join(r.Dir, "inside.yaml")))
	must(t, os.Symlink("base/cm.yaml", filepath.Join(r.Dir, "inside.yaml")))
	repo, err := Open(r.Dir)
	must(t, err)
	for _, ref := range []string{"HEAD", ""} {
		snap, err := repo.Snapshot(ref)
		must(t, err)
		if data, err := fs.ReadFile(snap.FS, "linkdir/cm.yaml"); err != nil || string(data) != "kind: x\n" {
			t.Fatalf("%s: symlinked directory inside the repo: %q, %v", snap.Describe(), data, err)
		}
		for _, name := range []string{"abs.yaml", "rel.yaml"} {
			data, err := fs.ReadFile(snap.FS, name)
			if err == nil || strings.Contains(string(data), "stolen") {
				t.Fatalf("%s: %s read outside the repository: %q", snap.Describe(), name, data)
			}
		}
	}
	head, err := repo.Snapshot("HEAD")
	must(t, err)
	if _, err := fs.ReadFile(head.FS, "inside.yaml"); err == nil {
		t.Fatal("committed link ../base/cm.yaml at the root should lead outside the repository")
	}
	if _, err := fs.ReadFile(head.FS, "abs.yaml"); err == nil || !strings.Contains(err.Error(), "leads outside the repository") {
		t.Fatalf("want a clear outside error, got %v", err)
	}
}

// paths are the changes as "path", "-path" (removed) and "from>path" (renamed).
func paths(changes []FileChange) string {
	var out []string
	for _, c := range changes {
		switch {
		case c.Removed:
			out = append(out, "-"+c.Path)
		case c.From != "":
			out = append(out, c.From+">"+c.Path)
		default:
			out = append(out, c.Path)
		}
	}
	return strings.Join(out, " ")
}

func TestFilesChangedBetweenCommitsAndTheWorkTree(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	must(t, err)
	c1, err := r.CommitFiles(map[string]string{"a/one.yaml": "1", "a/two.yaml": "2", "b/three.yaml": "3", "e/same.yaml": "same", "e/same2.yaml": "same", ".gitignore": "*.tmp\n"}, "first")
	must(t, err)
	// A rename (b/three.yaml to c/three.yaml, same content), two files of the same
	// content removed and one of it added (one rename, one removal), an edit, an add.
	c2, err := r.CommitFiles(map[string]string{"a/two.yaml": "two", "b/three.yaml": "", "c/three.yaml": "3", "c/four.yaml": "4",
		"e/same.yaml": "", "e/same2.yaml": "", "f/same.yaml": "same"}, "second")
	must(t, err)
	repo, err := Open(r.Dir)
	must(t, err)
	base, err := repo.Snapshot(c1)
	must(t, err)
	head, err := repo.Snapshot(c2)
	must(t, err)
	got, err := Files(base, head)
	must(t, err)
	if want := "a/two.yaml c/four.yaml b/three.yaml>c/three.yaml -e/same2.yaml e/same.yaml>f/same.yaml"; paths(got) != want {
		t.Errorf("commit vs commit: %s, want %s", paths(got), want)
	}
	// The work tree: an edit, an untracked file, an ignored file (not counted).
	must(t, r.Write(map[string]string{"a/one.yaml": "one", "d/new.yaml": "5", "a/scratch.tmp": "x"}))
	wt, err := repo.Snapshot("")
	must(t, err)
	got, err = Files(head, wt)
	must(t, err)
	if paths(got) != "a/one.yaml d/new.yaml" {
		t.Errorf("commit vs work tree: %s", paths(got))
	}
}

func TestDefaultBranchIsTheRemotesHEAD(t *testing.T) {
	r, err := gitfixture.Init(t.TempDir())
	must(t, err)
	_, err = r.CommitFiles(map[string]string{"a.yaml": "1"}, "first")
	must(t, err)
	plain, err := Open(r.Dir)
	must(t, err)
	if got := plain.DefaultBranch(); got != "HEAD" {
		t.Errorf("no remote: %s", got)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", r.Dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cloned, err := Open(clone)
	must(t, err)
	if got := cloned.DefaultBranch(); got != "origin/main" {
		t.Errorf("clone: %s", got)
	}
}
