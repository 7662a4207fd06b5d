package bitbucket

import (
	"html"
	"regexp"
	"strings"

	"github.com/drift-gitops/drift/internal/report/write"
)

// Flavour adapts drift's markdown to Bitbucket's. Both dialects render CommonMark with
// tables and strikethrough, and link no mention (@name, @{account}), issue or pull
// request (#1) or commit hash inside code, where drift puts every text a repository or
// a cluster controls. What differs from GitHub:
//
//   - HTML: neither renders any ("Bitbucket doesn't support arbitrary HTML in
//     Markdown", Cloud; "all HTML tags are escaped", Data Center), so drift's
//     collapsible sections would show as their tags: a <details> line becomes its
//     <summary> in bold (the text in its <code> elements, unescaped, in code spans),
//     </details> and the <a name> anchors go, and a [details](#anchor) link, whose
//     anchor no longer exists, reads "details below";
//   - alerts (> [!CAUTION]) are GitHub's: they become a quote that starts with the
//     alert's name in bold;
//   - words: the size note names Bitbucket's limit, not GitHub's.
//
// Lines in fences are left as they are; drift's fences are never closed by their
// content (a longer backtick run).
func Flavour(md string) string {
	lines := strings.Split(md, "\n")
	out := lines[:0:0]
	fence := ""
	for _, line := range lines {
		trimmed := strings.TrimRight(line, " ")
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case fence != "":
			if trimmed != "" && strings.Trim(trimmed, "`") == "" && len(trimmed) >= len(fence) {
				fence = ""
			}
		case anchorLine.MatchString(trimmed):
			continue
		case trimmed == "</details>":
			line = ""
		case strings.HasPrefix(line, "<details"):
			m := summaryLine.FindStringSubmatch(trimmed)
			if m == nil {
				continue
			}
			line = "**" + summaryText(m[1]) + "**"
		default:
			if m := alertLine.FindStringSubmatch(trimmed); m != nil {
				line = "> **" + alertNames[m[1]] + "**"
				break
			}
			line = detailsLink.ReplaceAllString(line, "details below")
			line = bitbucketWords.Replace(line)
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

var (
	anchorLine  = regexp.MustCompile(`^<a name="[^"<>]*"></a>$`)
	summaryLine = regexp.MustCompile(`^<details(?: open)?><summary>(.*)</summary>$`)
	codeElement = regexp.MustCompile(`<code>(.*?)</code>`)
	alertLine   = regexp.MustCompile(`^> \[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]$`)
	detailsLink = regexp.MustCompile(`\[details\]\(#[A-Za-z0-9_-]*\)`)
	alertNames  = map[string]string{"NOTE": "ℹ️ Note", "TIP": "💡 Tip", "IMPORTANT": "❗ Important", "WARNING": "⚠️ Warning", "CAUTION": "⛔ Caution"}
)

// summaryText is a <summary>'s HTML as markdown: each <code> element's text, which
// drift escaped (write's htmlcode), unescaped into a code span nothing closes; drift's
// own words between them unescaped.
func summaryText(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range codeElement.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(html.UnescapeString(s[last:m[0]]))
		b.WriteString(write.CodeSpan(html.UnescapeString(s[m[2]:m[3]])))
		last = m[1]
	}
	b.WriteString(html.UnescapeString(s[last:]))
	return b.String()
}

// bitbucketWords are drift's own phrases that name GitHub, as Bitbucket's are.
var bitbucketWords = strings.NewReplacer(
	"did not fit in this comment (GitHub's size limit)", "did not fit in this comment (Bitbucket's size limit)",
	"the job summary", "the step's artifacts",
)

// hidden and shown are a marker line (<!-- drift:... -->) as drift writes it to
// Bitbucket: HTML comments are escaped there, so the marker and the fingerprint would
// show as text; a link reference definition ([//]: # (drift:...)) is CommonMark that
// renders as nothing. Reading turns it back, so that forge sees the marker it wrote.
var (
	shownMarker  = regexp.MustCompile(`^<!-- (drift:[^()\n]*) -->$`)
	hiddenMarker = regexp.MustCompile(`^\[//\]: # \((drift:[^()\n]*)\)$`)
)

// hide writes the marker lines body starts with as link reference definitions.
func hide(body string) string { return leading(body, shownMarker, "[//]: # (", ")") }

// show reads them back as the HTML comments forge writes.
func show(body string) string { return leading(body, hiddenMarker, "<!-- ", " -->") }

func leading(body string, re *regexp.Regexp, open, close string) string {
	lines := strings.SplitAfter(body, "\n")
	for i, l := range lines {
		text := strings.TrimSuffix(l, "\n")
		m := re.FindStringSubmatch(text)
		if m == nil {
			break
		}
		lines[i] = open + m[1] + close + l[len(text):]
	}
	return strings.Join(lines, "")
}
