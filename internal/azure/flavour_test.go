package azure

import (
	"regexp"
	"strings"
	"testing"
)

// acted is what Azure DevOps acts on in a comment's or description's text,
// wherever it is: a mention (@<GUID>, raw or escaped), a work item (#1) or a pull
// request (!1) reference.
var acted = regexp.MustCompile(`(?i)@(<|&lt;|&#0*60;|&#x0*3c;)[0-9a-f-]{36}|#\d|!\d`)

// TestFlavourLeavesNothingAzureDevOpsActsOn: mentions, work item and pull request
// references in text, in code spans, in fences and in escaped HTML are broken;
// drift's alerts become what Azure DevOps can show; fences and drift's own HTML
// are kept; the size note names Azure DevOps.
func TestFlavourLeavesNothingAzureDevOpsActsOn(t *testing.T) {
	t.Parallel()
	guid := "3f1c7e5a-0b4d-4c11-9e2f-5a6b7c8d9e01"
	in := strings.Join([]string{
		"### drift: 1 to change",
		"> [!CAUTION]",
		"> the report is incomplete",
		"- `@<" + guid + ">` fixes #12 and !34",
		"<details><summary>🔁 change <code>@&lt;" + guid + "&gt; #5</code></summary>",
		"````diff",
		"+ owner: @<" + guid + ">",
		"> [!NOTE]",
		"+ color: '#123456' see !9",
		"````",
		"</details>",
		"> [!NOTE]",
		"> 2 diffs did not fit in this comment (GitHub's size limit): they are elsewhere",
		"@&#60;" + guid + "&#x3C; [details](#drift-1)",
	}, "\n")
	if n := len(acted.FindAllString(in, -1)); n < 9 {
		t.Fatalf("the checker finds %d in the input", n)
	}
	out := Flavour(in)
	if leaks := acted.FindAllString(out, -1); len(leaks) != 0 {
		t.Errorf("Azure DevOps would act on %q in:\n%s", leaks, out)
	}
	for _, want := range []string{"> ⛔ **Caution**", "> ℹ️ **Note**\n> 2 diffs did not fit in this comment (Azure DevOps' size limit)", "\n> [!NOTE]\n+ color", "````diff\n", "<details><summary>", "[details](#drift-1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.ReplaceAll(out, "\u200b", "") != strings.NewReplacer("> [!CAUTION]", "> ⛔ **Caution**", "\n> [!NOTE]\n> 2", "\n> ℹ️ **Note**\n> 2", "(GitHub's size limit)", "(Azure DevOps' size limit)").Replace(in) {
		t.Errorf("Flavour changed more than it should:\n%s", out)
	}
}
