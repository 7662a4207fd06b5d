package gitea

import "strings"

// Flavour adapts drift's markdown to Gitea's (and Forgejo's). Gitea renders
// CommonMark with GFM's tables, task lists and autolinks, alerts (> [!CAUTION]) and
// <details>, and then links, in text outside <code>, <pre> and links, mentions
// (@user, which also notifies), issue and pull request references (#1, !1,
// owner/repo#1), commit SHAs, full URLs and emoji (:name:). It also reads every
// comment for references, as markdown stripped of code spans, code blocks and HTML
// blocks (modules/markup/mdstripper): a reference there is recorded on the issue it
// names, and a keyword before it ("closes #1", "fixes", "resolves", "reopens")
// in a pull request's comment closes or reopens that issue when the pull request is
// merged. drift writes every text a repository or a cluster controls in a code span,
// a fence, or a <code> inside a <details> line (an HTML block), where Gitea neither
// links nor reads anything, so nothing there needs changing; Gitea has no command
// syntax beyond these keywords. What differs from GitHub is a word: the size note
// names drift's limit on a Gitea comment, not GitHub's.
// Inside a fence nothing is changed: a diff shows what the manifests hold.
func Flavour(md string) string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, line := range lines {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case fence != "" && strings.TrimRight(line, " ") != "" && strings.Trim(line, "`") == "" && len(strings.TrimRight(line, " ")) >= len(fence):
			fence = ""
		case fence == "":
			lines[i] = giteaWords.Replace(line)
		}
	}
	return strings.Join(lines, "\n")
}

// giteaWords are drift's own phrases that name GitHub, as they read on Gitea.
var giteaWords = strings.NewReplacer(
	"did not fit in this comment (GitHub's size limit)", "did not fit in this comment (the size drift keeps a Gitea comment to)",
)
