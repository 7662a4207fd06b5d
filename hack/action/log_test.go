package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/steplog/steplogtest"
)

// hostileRef is a ref, an input or a message of git's holding workflow commands on
// lines of their own, whichever way they end.
const hostileRef = "main\n::add-mask::hunter2\r##[set-env name=A]b\r\n  ::error file=README.md::forged 100%"

// TestLogHelpersPrintNoCommand: log.sh's log_text prints text from elsewhere with no
// line the runner takes for a command, and command_data puts it in one command's
// message, which reads back as the text.
func TestLogHelpersPrintNoCommand(t *testing.T) {
	cmd := exec.Command("bash", "-c", `source ./log.sh; log_text "$X"; echo "::warning title=drift::$(command_data "$X")"; log_text "$X"`)
	cmd.Env = append(os.Environ(), "X="+hostileRef)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := steplogtest.Commands(string(out))
	if len(got) != 1 || got[0].Name != "warning" || got[0].Data != hostileRef || got[0].Properties["title"] != "drift" {
		steplogtest.Fatalf(t, "commands %+v, want the one warning carrying the text:\n%q", got, out)
	}
	// Nothing but zero-width spaces added, CRLF read as one line end.
	text := strings.ReplaceAll(strings.SplitN(string(out), "::warning", 2)[0], "\u200b", "")
	if want := strings.ReplaceAll(hostileRef, "\r\n", "\n") + "\n"; text != want {
		steplogtest.Errorf(t, "log_text printed %q, want %q with zero-width spaces", text, want)
	}
}

// TestStepsQuoteNoCommand: the install step given an Action ref, and the preview step
// given a base ref and git's refusal of it, both holding commands, print no command of
// theirs: only the annotation drift's step writes, its message the ref.
func TestStepsQuoteNoCommand(t *testing.T) {
	o := install(t, server(t, nil), hostileRef, "Linux", "X64")
	got := steplogtest.Commands(o.log)
	if len(got) != 1 || got[0].Name != "notice" || !strings.Contains(got[0].Data, hostileRef) {
		steplogtest.Errorf(t, "install.sh: commands %+v, want one notice quoting the ref:\n%s", got, o.log)
	}

	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		steplogtest.Fatalf(t, "%v: %s", err, out)
	}
	for _, c := range []struct {
		base, command string
	}{
		{"-" + hostileRef, "error"},      // refused before git runs
		{hostileRef, "warning"},          // git fetch refuses the refspec, quoting it
		{"v1\n::add-mask::x", "warning"}, // one line more
	} {
		cmd := exec.Command("bash", filepath.Join(mustAbs(t, "."), "run.sh"))
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "DRIFT_BIN=true", "RUNNER_TEMP="+t.TempDir(), "GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "out"),
			"DRIFT_INPUT_BASE_REF="+c.base)
		out, _ := cmd.CombinedOutput()
		got := steplogtest.Commands(string(out))
		if len(got) != 1 || got[0].Name != c.command || !strings.Contains(got[0].Data, c.base) {
			steplogtest.Errorf(t, "run.sh with base %q: commands %+v, want one %s quoting the base:\n%s", c.base, got, c.command, out)
		}
		if c.command == "warning" && !strings.Contains(strings.ReplaceAll(string(out), "\u200b", ""), "invalid refspec") {
			steplogtest.Errorf(t, "run.sh with base %q: git's refusal is not in the log:\n%s", c.base, out)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
