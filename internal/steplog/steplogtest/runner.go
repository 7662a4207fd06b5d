// Package steplogtest reads a step's log as the GitHub Actions runner does, for tests:
// which of its lines the runner would take for workflow commands.
package steplogtest

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/drift-gitops/drift/internal/steplog"
)

// Command is a line the runner takes for a workflow command.
type Command struct {
	// Line is the line as the runner reads it.
	Line string
	// Name, Properties and Data are what the runner parses out of it, unescaped.
	Name       string
	Properties map[string]string
	Data       string
}

// Commands returns every line of log that the runner would take for a workflow command,
// whatever its name (the runner acts only on the names it knows; a test must not rely
// on which those are). It mirrors actions/runner's ActionCommand.TryParseV2 and
// TryParse, as ActionCommandManager.TryProcessCommand calls them, over the lines of
// StreamReader.ReadLine, with ordinal comparisons.
func Commands(log string) []Command {
	var out []Command
	for _, line := range Lines(log) {
		if c, ok := parseV2(line); ok {
			out = append(out, c)
		} else if c, ok := parseV1(line); ok {
			out = append(out, c)
		}
	}
	return out
}

// Lines splits log into lines as .NET's StreamReader.ReadLine does: a line ends at
// "\n", "\r" or "\r\n", and an empty end is no line.
func Lines(log string) []string {
	var lines []string
	for len(log) > 0 {
		i := strings.IndexAny(log, "\r\n")
		if i < 0 {
			lines = append(lines, log)
			break
		}
		lines = append(lines, log[:i])
		if log[i] == '\r' && i+1 < len(log) && log[i+1] == '\n' {
			i++
		}
		log = log[i+1:]
	}
	return lines
}

// parseV2 is TryParseV2: "::name k=v,k=v::data" after leading white space. Go's
// unicode.IsSpace is the Unicode White_Space property, the same set as .NET's
// char.IsWhiteSpace, which string.TrimStart trims.
func parseV2(line string) (Command, bool) {
	msg := strings.TrimLeftFunc(line, unicode.IsSpace)
	if !strings.HasPrefix(msg, "::") {
		return Command{}, false
	}
	end := strings.Index(msg[2:], "::")
	if end < 0 {
		return Command{}, false
	}
	end += 2
	info := msg[2:end]
	c := Command{Line: line, Properties: map[string]string{}}
	name, props, hasProps := strings.Cut(info, " ")
	c.Name = name
	if hasProps && name != "" {
		for _, p := range strings.Split(strings.TrimSpace(props), ",") {
			if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
				c.Properties[k] = unescape(v, "%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
			}
		}
	}
	c.Data = unescape(msg[end+2:], "%0D", "\r", "%0A", "\n", "%25", "%")
	return c, true
}

// parseV1 is TryParse: "##[name k=v;k=v]data" anywhere in the line.
func parseV1(line string) (Command, bool) {
	start := strings.Index(line, "##[")
	if start < 0 {
		return Command{}, false
	}
	rb := strings.IndexByte(line[start:], ']')
	if rb < 0 {
		return Command{}, false
	}
	rb += start
	info := line[start+3 : rb]
	c := Command{Line: line, Properties: map[string]string{}}
	name, props, hasProps := strings.Cut(info, " ")
	c.Name = name
	if hasProps && name != "" {
		for _, p := range strings.Split(props, ";") {
			if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
				c.Properties[k] = unescape(v, "%3B", ";", "%0D", "\r", "%0A", "\n", "%5D", "]", "%25", "%")
			}
		}
	}
	c.Data = unescape(line[rb+1:], "%3B", ";", "%0D", "\r", "%0A", "\n", "%5D", "]", "%25", "%")
	return c, true
}

// unescape replaces each escape in turn, in the runner's order (not at once).
func unescape(s string, pairs ...string) string {
	for i := 0; i < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// Inert is s as steplog.Writer writes it to a step's log: no line of it is a command.
func Inert(s string) string {
	var b strings.Builder
	w := steplog.NewWriter(&b)
	w.Write([]byte(s))
	w.Flush()
	return b.String()
}

// Errorf is t.Errorf with the message made Inert: a failing test that quotes the
// hostile output it checks writes no workflow command into the CI job's own log.
func Errorf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Error(Inert(fmt.Sprintf(format, args...)))
}

// Fatalf is t.Fatalf with the message made Inert.
func Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatal(Inert(fmt.Sprintf(format, args...)))
}
