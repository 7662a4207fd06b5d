package azure

import (
	"strings"
	"testing"
)

// TestInertLeavesTheAgentNothingToRun: logging commands anywhere in a line, the log
// viewer's formatting prefixes, and both hidden behind characters a culture-aware
// comparison ignores (zero-width space, soft hyphen, joiners, a BOM, a NUL) are read
// by the agent's rules before and not after; text without them is untouched.
func TestInertLeavesTheAgentNothingToRun(t *testing.T) {
	t.Parallel()
	hostile := []string{
		"##vso[task.setvariable variable=PATH]/tmp/evil",
		"deploying web: ##vso[task.prependpath]/tmp/evil",
		"##[group]fake section",
		"  ##[error]not drift's",
		"###vso[artifact.upload]x",
		"##\u200bvso[task.setsecret]x",
		"#\u00ad#vso[task.complete result=Failed]",
		"#\u200d#\ufeff[warning]x",
		"##v\u0000so[task.logissue]x",
		"a\n##vso[task.setvariable variable=X]1\r##[section]y",
		"##vso[task.setvariable variable=A]1 ##vso[task.setvariable variable=B]2",
	}
	for _, h := range hostile {
		if !AgentWouldRead(h) {
			t.Fatalf("the restated rules miss %q", h)
		}
		out := Inert(h)
		if AgentWouldRead(out) {
			t.Errorf("Inert(%q) = %q, still read by the agent", h, out)
		}
		if strings.ReplaceAll(out, "# #", "##") != h && !strings.Contains(h, "\u200b") && !strings.Contains(h, "\u00ad") && !strings.Contains(h, "\u200d") && !strings.Contains(h, "\u0000") {
			t.Errorf("Inert(%q) = %q changed more than a space", h, out)
		}
	}
	for _, fine := range []string{"", "drift: 2 to add", "# heading ## not [a command]", "vso[x] #vso[ ##vso", "color: '#123456'"} {
		if AgentWouldRead(fine) || Inert(fine) != fine {
			t.Errorf("%q: read %t, Inert %q", fine, AgentWouldRead(fine), Inert(fine))
		}
	}
}
