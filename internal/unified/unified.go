// Package unified writes unified diffs as GNU diff -u does and patch -p1 applies: the
// line-level edit script from go-diff, hunks with GNU's ranges and context.
package unified

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

type diffLine struct {
	op   byte // ' ', '-', '+'
	text string
}

// Diff returns a unified diff of a and b with context lines around each change, that
// patch -p1 applies, with headers "--- from" and "+++ to", or "" when they are equal.
// The line-level edit script comes from go-diff with no time limit, so the same input
// always gives the same diff.
func Diff(a, b, from, to string, context int) string {
	if a == b {
		return ""
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ra, rb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)
	var ops []diffLine
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range Lines(d.Text) {
			ops = append(ops, diffLine{op: op, text: l})
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	writeHunks(&sb, ops, context)
	return sb.String()
}

// Lines splits s after each newline; a last line without one keeps no newline.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func writeHunks(sb *strings.Builder, ops []diffLine, contextLines int) {
	// oldBefore[i] and newBefore[i]: lines of each side before ops[i].
	oldBefore := make([]int, len(ops)+1)
	newBefore := make([]int, len(ops)+1)
	for i, o := range ops {
		oldBefore[i+1], newBefore[i+1] = oldBefore[i], newBefore[i]
		if o.op != '+' {
			oldBefore[i+1]++
		}
		if o.op != '-' {
			newBefore[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].op == ' ' {
			i++
		}
		if i == len(ops) {
			return
		}
		start := max(0, i-contextLines)
		last := i
		for j := i; j < len(ops); {
			if ops[j].op != ' ' {
				last = j
				j++
				continue
			}
			k := j
			for k < len(ops) && ops[k].op == ' ' {
				k++
			}
			if k == len(ops) || k-j > 2*contextLines {
				break
			}
			j = k
		}
		end := min(len(ops), last+1+contextLines)
		oldCount := oldBefore[end] - oldBefore[start]
		newCount := newBefore[end] - newBefore[start]
		fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(oldBefore[start], oldCount), hunkRange(newBefore[start], newCount))
		for _, o := range ops[start:end] {
			sb.WriteByte(o.op)
			sb.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
}

// hunkRange formats a range as GNU diff does: "start,count", "start" when count is 1,
// and the line before the range when it is empty.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	default:
		return fmt.Sprintf("%d,%d", before+1, count)
	}
}
