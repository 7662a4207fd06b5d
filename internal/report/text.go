package report

import (
	"strconv"
	"strings"
	"unicode"
)

// LineText is a message with every control character but newline and tab written as
// its Go escape (a carriage return as \r, a terminal escape as \x1b), and the
// Unicode line and paragraph separators too: what a chart's fail message or a
// server's answer holds can then neither end a line where a reader (a terminal, the
// Actions runner, a markdown renderer) does not expect it nor move the cursor.
// drift report merge refuses a shard's report holding any of them.
func LineText(s string) string {
	if !strings.ContainsFunc(s, escapedRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escapedRune(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func escapedRune(r rune) bool {
	return (unicode.IsControl(r) && r != '\n' && r != '\t') || r == '\u2028' || r == '\u2029'
}
