package write

import (
	"bytes"
	"strings"
	"testing"
)

func TestCodeSpanAndFenceCannotBeEscaped(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "`plain`",
		"a`b":        "``a`b``",
		"`edge":      "`` `edge ``",
		"x```y":      "````x```y````",
		"two\nlines": "`two lines`",
		"cr\rcrlf\r\nvt\vff\fnel\u0085ls\u2028ps\u2029end": "`cr crlf vt ff nel ls ps end`",
	} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := cellCode("a|b\\|`c`"), "`` a\\|b\\\\|`c` ``"; got != want {
		t.Errorf("cellCode = %q, want %q", got, want)
	}
	if got, want := htmlCode("<b>@team\r\n\r\n#42</b>"), "<code>&lt;b&gt;@team  #42&lt;/b&gt;</code>"; got != want {
		t.Errorf("htmlCode = %q, want %q", got, want)
	}
	var b bytes.Buffer
	writeFence(&b, "diff", "+ value: ```` @someone")
	if !strings.Contains(b.String(), "\n`````diff\n") {
		t.Fatalf("fence not longer than the content's run:\n%s", b.String())
	}
}
