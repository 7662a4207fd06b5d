package azure

import (
	"regexp"
	"strings"
)

// Flavour adapts drift's markdown to Azure DevOps', in pull request comments and in
// a work item's Markdown description and comments. drift puts every text a
// repository or a cluster controls in code spans, fences or escaped HTML, where no
// markdown renderer makes a link, an image or HTML of it; Azure DevOps also acts on
// text of its own, and not only where its renderer draws it:
//
//   - a mention is stored as @<identity GUID>, and the service notifies the
//     identity from the comment's text, code or not: an "@" before "<" (or its
//     escaped forms) gets a zero-width space between them;
//   - #123 links (and mentions) work item 123, and !123 pull request 123: a zero-width
//     space follows "#" or "!" before a digit, inside code too;
//   - alerts: Azure DevOps renders "> [!NOTE]" as a quote that shows the brackets,
//     so drift's own alert lines (outside fences) become a bold word;
//   - words: the size note names Azure DevOps' limit, not GitHub's.
//
// Raw HTML drift writes (<details>, <summary>, <a name>) is what Azure DevOps'
// markdown allows in comments; its sanitizer drops scripts and event handlers.
func Flavour(md string) string {
	md = mention.ReplaceAllString(md, "@\u200b$1")
	md = reference.ReplaceAllString(md, "$1\u200b$2")
	lines := strings.Split(md, "\n")
	fence := ""
	for i, line := range lines {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case fence != "":
			if t := strings.TrimRight(line, " "); t != "" && strings.Trim(t, "`") == "" && len(t) >= len(fence) {
				fence = ""
			}
		default:
			if a, ok := alerts[line]; ok {
				lines[i] = a
				continue
			}
			lines[i] = azureWords.Replace(line)
		}
	}
	return strings.Join(lines, "\n")
}

var (
	// mention is "@" before "<" as text or as the entities html.EscapeString and
	// others write for it.
	mention = regexp.MustCompile(`(?i)@(<|&lt;|&#0*60;|&#x0*3c;)`)
	// reference is a work item's (#) or pull request's (!) number.
	reference = regexp.MustCompile(`([#!])(\d)`)
)

// alerts are drift's alert lines as Azure DevOps can show them.
var alerts = map[string]string{
	"> [!CAUTION]": "> ⛔ **Caution**",
	"> [!WARNING]": "> ⚠️ **Warning**",
	"> [!NOTE]":    "> ℹ️ **Note**",
}

// azureWords are drift's own phrases that name GitHub, as Azure DevOps' are.
var azureWords = strings.NewReplacer(
	"did not fit in this comment (GitHub's size limit)", "did not fit in this comment (Azure DevOps' size limit)",
)
