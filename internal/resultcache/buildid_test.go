package resultcache

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// TestABuildWithoutACommitIsNamedByItsExecutable: a build that knows no commit (a
// development build, one built outside a git checkout) is named by its executable's
// Go build ID, as go tool buildid reads it, so that a changed build never reads
// another's answers and renderings; a build that knows its commit is named by it.
func TestABuildWithoutACommitIsNamedByItsExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	want := strings.TrimSpace(string(out))
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	if got := BuildIDOf(devel, exe); got != "(devel) buildid="+want {
		t.Errorf("a development build is %q, want its Go build ID %q", got, want)
	}
	if got := BuildIDOf(devel, "/nonexistent/drift"); got != "(devel)" {
		t.Errorf("with no executable to read: %q", got)
	}
	// Not an ELF file (a Mach-O's, a PE's): the string at the start of the text.
	other := t.TempDir() + "/drift"
	if err := os.WriteFile(other, []byte("\xcf\xfa\xed\xfe...\xff Go build ID: \"abc/def\"\n \xff..."), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := BuildIDOf(devel, other); got != "(devel) buildid=abc/def" {
		t.Errorf("a Mach-O's build: %q", got)
	}
	released := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}
	if got := BuildIDOf(released, exe); got != "v1.2.3 vcs.revision=abc123" {
		t.Errorf("a build that knows its commit is %q", got)
	}
}
