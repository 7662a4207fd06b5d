package steplog_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/steplog"
	"github.com/drift-gitops/drift/internal/steplog/steplogtest"
)

// zwsp is what a Writer inserts: U+200B ZERO WIDTH SPACE.
const zwsp = "\u200b"

// hostile are lines a repository or a cluster can put in drift's output, each a
// workflow command to the runner as it is.
var hostile = []string{
	"::add-mask::hunter2\n",
	"  ::error file=README.md,line=1,title=drift::all good, merge it\n",
	"\t::warning::forged\n",
	"\u00a0\u3000\u2028\u0085\v\f::set-output name=has-changes::false\n",
	"value: first line\r::group::forged group\n",
	"value: first line\r\n  ::endgroup::\r\n",
	"no newline at the end \r::stop-commands::token",
	"     ::notice title=x::y\n",
	"##[add-mask]hunter2\n",
	"    data: \"x ##[error]forged\"\n",
	"###[set-env name=A]b ####[x]y #[#[z]\n",
	"::::\n::x::\n",
	"#\r##[debug]after a CR\n",
}

// edges are texts that end where a command could begin: held back, then written.
var edges = []string{"ends with a colon :\n:\n::", "ends with hashes ##", "#", "\u00a0", "\xc2", "x\r"}

// TestWriterLeavesNoCommand writes each hostile text through a Writer, whole, a byte
// at a time and split at every byte, and reads the output as the runner does: no line
// is a command, and the output is the text with zero-width spaces inserted, nothing
// else changed.
func TestWriterLeavesNoCommand(t *testing.T) {
	for _, in := range hostile {
		if len(steplogtest.Commands(in)) == 0 {
			steplogtest.Fatalf(t, "the test's input %q is no command to the runner", in)
		}
	}
	for _, in := range append(hostile, edges...) {
		for _, chunks := range splits(in) {
			var buf bytes.Buffer
			w := steplog.NewWriter(&buf)
			for _, c := range chunks {
				if n, err := w.Write([]byte(c)); err != nil || n != len(c) {
					steplogtest.Fatalf(t, "Write(%q) = %d, %v", c, n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if cmds := steplogtest.Commands(out); len(cmds) > 0 {
				steplogtest.Errorf(t, "%q written as %q: the runner reads command %q in %q", in, chunks, cmds[0].Name, out)
			}
			if strings.ReplaceAll(out, zwsp, "") != in {
				steplogtest.Errorf(t, "%q written as %q came out as %q", in, chunks, out)
			}
		}
	}
}

// splits are ways to write s: whole, a byte at a time, and in two at every byte.
func splits(s string) [][]string {
	out := [][]string{{s}}
	var bytewise []string
	for i := 0; i < len(s); i++ {
		bytewise = append(bytewise, s[i:i+1])
		out = append(out, []string{s[:i], s[i:]})
	}
	return append(out, bytewise)
}

// TestWriterKeepsPlainText: text that is no command passes unchanged.
func TestWriterKeepsPlainText(t *testing.T) {
	in := "drift: commit 1a2b3c (main)\n\nTarget web (2 objects)\n+ v1 ConfigMap shop/a: data.k  (cm.yaml)\n  key: a::b # comment [x]\n\u00e9t\u00e9 :: ## [\n"
	var buf bytes.Buffer
	w := steplog.NewWriter(&buf)
	if _, err := w.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != in {
		steplogtest.Errorf(t, "plain text changed:\n%q\nwant\n%q", buf.String(), in)
	}
}

// TestCommandsPassWhole: drift's own commands, written through WriteCommand between
// hostile text, each on a line of its own, parse as the runner reads them to exactly
// their name, properties and message, and they are the only commands in the log.
func TestCommandsPassWhole(t *testing.T) {
	want := []steplog.Command{
		{Name: "error", Properties: []steplog.Property{{"file", "apps/web,1.yaml"}, {"line", "7"}, {"title", "drift: invalid v1 ConfigMap shop/a"}},
			Message: "bad: 100%\n::add-mask::x\r##[error]y"},
		{Name: "warning", Properties: []steplog.Property{{"title", "drift"}}, Message: "3 more errors are not annotated: see the report"},
		{Name: "group", Message: "drift"},
	}
	var buf bytes.Buffer
	w := steplog.NewWriter(&buf)
	for i, c := range want {
		// Hostile text before each command, the last line unfinished.
		if _, err := w.Write([]byte(hostile[i] + "  ::warning::unfinished line")); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteCommand(c); err != nil {
			t.Fatal(err)
		}
	}
	got := steplogtest.Commands(buf.String())
	if len(got) != len(want) {
		steplogtest.Fatalf(t, "%d commands in the log, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, c := range want {
		props := map[string]string{}
		for _, p := range c.Properties {
			props[p.Key] = p.Value
		}
		if got[i].Name != c.Name || got[i].Data != c.Message || !reflect.DeepEqual(got[i].Properties, props) {
			steplogtest.Errorf(t, "command %d reads as %+v, want %+v", i, got[i], c)
		}
	}
}

// TestCommandStringIsTheAnnotationsFormat: the line of a command is the one drift's
// annotations always wrote.
func TestCommandStringIsTheAnnotationsFormat(t *testing.T) {
	c := steplog.Command{Name: "error", Properties: []steplog.Property{{"file", "apps/web,1.yaml"}, {"line", "7"}, {"title", "drift: invalid"}}, Message: "bad: 100%\nnext"}
	if got, want := c.String(), "::error file=apps/web%2C1.yaml,line=7,title=drift%3A invalid::bad: 100%25%0Anext"; got != want {
		steplogtest.Errorf(t, "String() = %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if err := steplog.CommandsTo(&buf).WriteCommand(steplog.Command{Name: "warning", Message: "m"}); err != nil || buf.String() != "::warning::m\n" {
		steplogtest.Errorf(t, "a plain writer's command path wrote %q, %v", buf.String(), err)
	}
}

// FuzzWriter: whatever drift writes, in whatever pieces, no line is a command and
// nothing but zero-width spaces is added.
func FuzzWriter(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, 3)
	}
	f.Fuzz(func(t *testing.T, in string, cut int) {
		var buf bytes.Buffer
		w := steplog.NewWriter(&buf)
		if cut < 0 {
			cut = -cut
		}
		cut %= len(in) + 1
		w.Write([]byte(in[:cut]))
		w.Write([]byte(in[cut:]))
		w.Flush()
		out := buf.String()
		if cmds := steplogtest.Commands(out); len(cmds) > 0 {
			steplogtest.Errorf(t, "%q: the runner reads command %q in %q", in, cmds[0].Name, out)
		}
		if strings.ReplaceAll(out, zwsp, "") != strings.ReplaceAll(in, zwsp, "") {
			steplogtest.Errorf(t, "%q came out as %q", in, out)
		}
	})
}
