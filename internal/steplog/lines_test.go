package steplog

import (
	"bytes"
	"strings"
	"testing"
)

// TestLineWriterSeesEveryLineWhole: a sequence split over writes, and one at the end
// of the output, reach inert whole, and the bytes are otherwise those written.
func TestLineWriterSeesEveryLineWhole(t *testing.T) {
	var out bytes.Buffer
	var seen []string
	inert := func(s string) string {
		seen = append(seen, s)
		return strings.ReplaceAll(s, "##vso[", "# #vso[")
	}
	w := NewLineWriter(&out, inert)
	for _, p := range []string{"a ##", "vso[task.setvariable]x\r\nb\n#", "#vso[x]"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "a # #vso[task.setvariable]x\r\nb\n# #vso[x]"
	if out.String() != want {
		t.Errorf("out = %q, want %q", out.String(), want)
	}
	for _, s := range seen {
		if strings.HasSuffix(s, "#") {
			t.Errorf("inert saw a line cut in the middle: %q", s)
		}
	}
}
