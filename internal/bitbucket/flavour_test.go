package bitbucket

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/drift-gitops/drift/internal/publish/forge"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/report/write/trusttest"
)

// reference is a mention (@name, @{account}), an issue or pull request (#1) or a
// commit hash as Bitbucket links them in text outside code.
var reference = regexp.MustCompile(`(^|[^\w&])(@[\w{.-]+|#\d+|\b[0-9a-f]{7,40}\b)`)

// TestFlavouredReportsShowHostileTextOnlyAsCode: a report whose every string from a
// repository or a cluster is hostile (trusttest), whole, as a summary and under a
// budget, read as Bitbucket reads it (CommonMark with tables, strikethrough and
// autolinks, all HTML escaped): no HTML is left to show as its tags, no hostile
// string is outside code, and there is no link, image, mention or reference that is
// not drift's own.
func TestFlavouredReportsShowHostileTextOnlyAsCode(t *testing.T) {
	t.Parallel()
	for _, s := range trusttest.Strings {
		if len(outsideCode(s)) == 0 && !strings.HasPrefix(s, "ticks") { // the ticks' string is a code span itself
			t.Fatalf("the checker finds nothing in the hostile %q itself", s)
		}
	}
	rep := trusttest.Report()
	for _, opts := range []write.MarkdownOptions{{ShowUnchanged: true}, {SummaryOnly: true}, {MaxBytes: 3000}} {
		var b bytes.Buffer
		if err := write.Markdown(&b, rep, opts); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "<details>") || !strings.Contains(b.String(), "> [!CAUTION]") {
			t.Fatalf("the report has no collapsible section or alert to flavour:\n%s", b.String())
		}
		if len(outsideCode(b.String())) == 0 {
			t.Fatal("the checker finds nothing to flavour in GitHub's markdown")
		}
		md := Flavour(b.String())
		if strings.Contains(md, "> [!CAUTION]") || strings.Contains(md, "\n<details>") {
			t.Errorf("GitHub's syntax is left:\n%s", md)
		}
		for _, leak := range outsideCode(md) {
			t.Errorf("%+v: Bitbucket would show %q outside code", opts, leak)
		}
	}
}

// outsideCode parses md as Bitbucket does and returns what it would show outside
// code that a repository or a cluster wrote, or that links.
func outsideCode(md string) []string {
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Linkify, extension.Strikethrough)).Parser().Parse(text.NewReader(src))
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			out = append(out, "link to "+string(n.Destination))
		case *ast.AutoLink:
			out = append(out, "autolink "+string(n.URL(src)))
		case *ast.Image:
			out = append(out, "image "+string(n.Destination))
		case *ast.RawHTML:
			seg := n.Segments.At(0)
			out = append(out, "HTML "+string(seg.Value(src)))
		case *ast.HTMLBlock:
			seg := n.Lines().At(0)
			out = append(out, "HTML block "+string(seg.Value(src)))
		case *ast.Text:
			s := string(n.Segment.Value(src))
			if strings.Contains(s, trusttest.Mark) {
				out = append(out, "text "+s)
			}
			for _, m := range reference.FindAllString(s, -1) {
				out = append(out, "reference "+m+" in "+s)
			}
		}
		return ast.WalkContinue, nil
	})
	return out
}

// TestFlavourRewritesGitHubsSyntax: each construct Bitbucket does not render is
// rewritten: a collapsible section into its summary in bold, the <code> of the
// summary into code spans nothing closes (its escaped text unescaped), anchors and
// closing tags away, the links to them, alerts; fences are left as they are, and the
// size note names Bitbucket.
func TestFlavourRewritesGitHubsSyntax(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`<details><summary>➕ add <code>Deployment shop/web &lt;img&gt; ` + "`x`" + `</code> · ⚠️ 2 risks</summary>`,
			"**➕ add `` Deployment shop/web <img> `x` `` · ⚠️ 2 risks**"},
		{`<details open><summary>Coverage of the change: 3 of 4</summary>`, "**Coverage of the change: 3 of 4**"},
		{"<details>", ""},
		{`<a name="obj-3"></a>`, ""},
		{"</details>", ""},
		{"> [!CAUTION]", "> **⛔ Caution**"},
		{"> [!WARNING]", "> **⚠️ Warning**"},
		{"- ➕ `web` · [details](#obj-3)", "- ➕ `web` · details below"},
		{"> 2 diffs did not fit in this comment (GitHub's size limit): they are in the job summary and the JSON report.",
			"> 2 diffs did not fit in this comment (Bitbucket's size limit): they are in the step's artifacts and the JSON report."},
		{"````diff\n</details>\n> [!CAUTION]\n```\n<a name=\"x\"></a>\n````", "````diff\n</details>\n> [!CAUTION]\n```\n<a name=\"x\"></a>\n````"},
	}
	for _, c := range cases {
		got := Flavour(c.in)
		if c.want == "" && c.in != "</details>" {
			if got != "" {
				t.Errorf("%q: %q, want it gone", c.in, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if got := Flavour("a\n<a name=\"x\"></a>\nb"); got != "a\nb" {
		t.Errorf("anchor line kept: %q", got)
	}
}

// TestMarkersAreWrittenHiddenAndReadBack: the marker lines a body starts with are
// written as link reference definitions, which Bitbucket renders as nothing, and
// read back as forge wrote them; a marker line later in the body, or another HTML
// comment, is left as it is.
func TestMarkersAreWrittenHiddenAndReadBack(t *testing.T) {
	t.Parallel()
	marker := forge.Marker([]string{"web"})
	body := marker + "\n" + forge.FingerprintLine("abc") + "\n### drift\n" + marker + "\n<!-- other -->"
	hidden := hide(body)
	lines := strings.Split(hidden, "\n")
	if !strings.HasPrefix(lines[0], "[//]: # (drift:report targets=") || lines[1] != "[//]: # (drift:fingerprint=abc)" || lines[3] != marker || lines[4] != "<!-- other -->" {
		t.Errorf("hidden = %q", hidden)
	}
	if show(hidden) != body {
		t.Errorf("read back %q", show(hidden))
	}
	if out := outsideCode(hidden[:strings.Index(hidden, "### drift")]); len(out) != 0 {
		t.Errorf("the hidden marker shows: %q", out)
	}
	var b bytes.Buffer
	if err := goldmark.Convert([]byte(strings.Join(lines[:2], "\n")), &b); err != nil || strings.TrimSpace(b.String()) != "" {
		t.Errorf("the hidden marker renders as %q", b.String())
	}
}
