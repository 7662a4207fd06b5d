package publish

import "strings"

// GitLabFlavour adapts drift's markdown to GitLab's. GitLab renders GitHub's
// collapsible sections, tables, alerts (> [!CAUTION]) and emoji
// alike, and links no reference (@user, #1, !1, ~label, %milestone, $snippet, &epic,
// [[wiki]]) inside code, where drift puts every text a repository or a cluster
// controls. What differs:
//
//   - quick actions: GitLab runs a line that starts with "/" and a command's name
//     (/close, /merge, /approve) in a note or an issue's description, skipping only
//     fences of exactly three backticks, which drift's are not always. No line drift
//     writes to GitLab starts with "/": outside fences it is escaped (\/, which shows
//     as /), inside one it is indented by a space;
//   - words: the size note names GitLab's limit and a note, not GitHub's comment.
func GitLabFlavour(md string) string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, line := range lines {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case fence != "" && strings.TrimRight(line, " ") != "" && strings.Trim(line, "`") == "" && len(strings.TrimRight(line, " ")) >= len(fence):
			fence = ""
		case strings.HasPrefix(line, "/") && fence != "":
			lines[i] = " " + line
		case strings.HasPrefix(line, "/"):
			lines[i] = `\` + line
		case fence == "":
			lines[i] = gitlabWords.Replace(line)
		}
	}
	return strings.Join(lines, "\n")
}

// gitlabWords are drift's own phrases that name GitHub, as GitLab's are.
var gitlabWords = strings.NewReplacer(
	"did not fit in this comment (GitHub's size limit)", "did not fit in this note (GitLab's size limit)",
	"did not fit in the pull request comment", "did not fit in the merge request note",
)
