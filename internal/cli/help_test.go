package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// --help lists drift's own flags first, then the report's, rendering's, GitHub's and
// the connection's, each flag in its group once.
func TestUsageGroupsFlags(t *testing.T) {
	c := &cobra.Command{Use: "diff", Run: func(*cobra.Command, []string) {}}
	f := c.Flags()
	f.String("kubeconfig", "", "")
	f.Bool("github-comment", false, "")
	f.String("html", "", "")
	f.String("render-timeout", "", "")
	f.String("ref", "", "")
	GroupAll(f, nil)
	var out bytes.Buffer
	c.SetOut(&out)
	if err := Usage(c); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	order := []string{"\nFlags:", "--ref", "\nReport flags:", "--html", "\nRendering and chart flags:", "--render-timeout",
		"\nGitHub flags:", "--github-comment", "\nKubernetes connection flags:", "--kubeconfig"}
	at := -1
	for _, w := range order {
		i := strings.Index(s, w)
		if i < at {
			t.Fatalf("%q out of order (or missing) in\n%s", w, s)
		}
		if strings.Count(s, w) != 1 {
			t.Errorf("%q %d times in\n%s", w, strings.Count(s, w), s)
		}
		at = i
	}
}

// -v above 6 would log request bodies, which hold Secret values: it is capped, and
// said so; a negative level is an error.
func TestVerbosityIsCapped(t *testing.T) {
	var w bytes.Buffer
	if err := (&Verbosity{level: 9}).Apply(&w); err != nil || !strings.Contains(w.String(), "-v 9 is 6") {
		t.Errorf("-v 9: %v %q", err, w.String())
	}
	if err := (&Verbosity{level: -1}).Apply(&w); err == nil {
		t.Error("-v -1: no error")
	}
	if err := (&Verbosity{}).Apply(&w); err != nil {
		t.Error(err)
	}
}
