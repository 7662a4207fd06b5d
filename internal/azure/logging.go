package azure

import (
	"strings"
	"unicode"
)

// The Azure Pipelines agent reads every line a step writes (stdout and stderr) for
// logging commands, and the run's log viewer formats some lines:
//
//   - a logging command is "##vso[area.event properties]data" ANYWHERE in a line:
//     the agent's Command.TryParse (src/Microsoft.VisualStudio.Services.Agent/
//     Command.cs) looks for "##vso[" with string.IndexOf, then for the next "]";
//     task.setvariable, task.setsecret, task.prependpath, artifact.upload and the
//     others are then run, whoever printed the line;
//   - string.IndexOf(string) compares by the current culture, which ignores
//     characters of no weight: "##\u200bvso[" or "#\u00ad#vso[" is found as "##vso[";
//   - the log viewer formats "##[group]", "##[endgroup]", "##[section]",
//     "##[command]", "##[error]", "##[warning]" and "##[debug]" lines.
//
// Inert breaks every such sequence with a space after its first "#" ("# #vso[",
// "# #[group]"), counting characters the culture ignores as absent; nothing else in
// text changes. Lines are what the agent reads: a line break ends a sequence.
func Inert(text string) string {
	type pos struct {
		r   rune
		end int // byte offset after the rune
	}
	var (
		b     strings.Builder
		last  int
		lines = []pos(nil)
	)
	flush := func() {
		for i := range lines {
			if matchAt(lines, i, func(p pos) rune { return p.r }) {
				b.WriteString(text[last:lines[i].end])
				b.WriteByte(' ')
				last = lines[i].end
			}
		}
		lines = lines[:0]
	}
	for i, r := range text {
		switch {
		case r == '\n' || r == '\r':
			flush()
		case ignorable(r):
		default:
			lines = append(lines, pos{r, i + len(string(r))})
		}
	}
	flush()
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// matchAt says whether "##vso[" or "##[" starts at s[i], s being a line's
// characters of weight.
func matchAt[T any](s []T, i int, r func(T) rune) bool {
	for _, seq := range []string{"##vso[", "##["} {
		j, ok := i, true
		for _, c := range seq {
			if j >= len(s) || r(s[j]) != c {
				ok = false
				break
			}
			j++
		}
		if ok {
			return true
		}
	}
	return false
}

// AgentWouldRead says whether the agent would run a logging command from text, or
// the log viewer format a line of it: the rules Inert breaks, restated.
func AgentWouldRead(text string) bool {
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
		var s []rune
		for _, r := range line {
			if !ignorable(r) {
				s = append(s, r)
			}
		}
		for i := range s {
			if matchAt(s, i, func(r rune) rune { return r }) {
				return true
			}
		}
	}
	return false
}

// ignorable says whether a culture-aware comparison gives r no weight: control
// characters (a tab aside), format characters (zero-width spaces and joiners, soft
// hyphen, bidirectional controls, tags), variation selectors and the other default
// ignorable code points.
func ignorable(r rune) bool {
	if r == '\t' {
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || r == '\u034f'
}
