package gitea

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	xhtml "golang.org/x/net/html"

	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/report/write/trusttest"
)

// gitea is Gitea's markdown as its renderer and its reference reader configure
// goldmark: GFM's tables, strikethrough, task lists and autolinks, definition lists,
// footnotes, raw HTML kept (the sanitizer runs after).
var gitea = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, extension.DefinitionList, extension.Footnote, extension.Linkify),
	goldmark.WithRendererOptions(html.WithUnsafe()),
)

// referenced is what Gitea's mdstripper reads of md for mentions, references and
// keywords: text that is not raw (a code span's is), and link destinations; code
// blocks and HTML blocks are not read.
func referenced(md string) []string {
	src := []byte(md)
	var out []string
	_ = ast.Walk(gitea.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.Text:
			if !v.IsRaw() {
				out = append(out, string(v.Segment.Value(src)))
			}
		case *ast.Link:
			out = append(out, string(v.Destination))
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			out = append(out, string(v.URL(src)))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// processed is the rendered text Gitea's post-processor links mentions, references,
// SHAs and URLs in: text nodes outside <code>, <pre> and <a>.
func processed(t *testing.T, md string) []string {
	t.Helper()
	var b bytes.Buffer
	if err := gitea.Convert([]byte(md), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := xhtml.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		switch {
		case n.Type == xhtml.TextNode:
			out = append(out, n.Data)
		case n.Type == xhtml.ElementNode && (n.Data == "code" || n.Data == "pre" || n.Data == "a"):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// TestGiteaReadsNoHostileTextOutsideCode: the comment (whole, under a budget, the
// summary) and the issue body of a report whose every repository- or cluster-given
// string is hostile (mentions, #refs, owner/repo#refs, URLs, images, HTML, closing
// tags) hold none of it where Gitea would read a mention, a reference or a closing
// keyword, or would link one when rendering.
func TestGiteaReadsNoHostileTextOutsideCode(t *testing.T) {
	t.Parallel()
	rep := trusttest.Report()
	for _, opts := range []write.MarkdownOptions{{}, {MaxBytes: MaxNoteBytes - 9000}, {MaxBytes: 4000}, {SummaryOnly: true}} {
		var b bytes.Buffer
		if err := write.Markdown(&b, rep, opts); err != nil {
			t.Fatal(err)
		}
		md := Flavour(b.String())
		if !strings.Contains(md, trusttest.Mark) {
			t.Fatalf("%+v: the report holds no hostile text to check", opts)
		}
		for _, s := range referenced(md) {
			if strings.Contains(s, trusttest.Mark) {
				t.Errorf("%+v: Gitea reads references in %q", opts, s)
			}
		}
		for _, s := range processed(t, md) {
			if strings.Contains(s, trusttest.Mark) {
				t.Errorf("%+v: Gitea links mentions and references in %q", opts, s)
			}
		}
	}
}

// TestTheCheckersSeeWhatGiteaReads: the checks above find a mention, a closing
// keyword, a reference and a link in plain text, in inline <code> outside an HTML
// block (Gitea's reader takes its text), and nothing in a code span, a fence or a
// <details> line.
func TestTheCheckersSeeWhatGiteaReads(t *testing.T) {
	t.Parallel()
	for md, want := range map[string]bool{
		"closes #1 PWN":                       true,
		"see <code>@PWN fixes #2</code> here": true,
		"[x](https://evil.example/PWN)":       true,
		"`@PWN closes #1`":                    false,
		"```text\n@PWN closes #1\n```":        false,
		"<details><summary><code>@PWN #1</code></summary>\n\nbody\n</details>": false,
	} {
		found := false
		for _, s := range referenced(md) {
			found = found || strings.Contains(s, trusttest.Mark)
		}
		if found != want {
			t.Errorf("referenced(%q) finds the mark: %t, want %t", md, found, want)
		}
	}
	if got := strings.Join(processed(t, "@PWN `@PWN2`"), ""); !strings.Contains(got, "@PWN") || strings.Contains(got, "PWN2") {
		t.Errorf("processed = %q", got)
	}
}

// TestFlavourNamesDriftsLimitOutsideFences: the size note names the limit drift keeps
// a Gitea comment to; a fence's lines are as they were.
func TestFlavourNamesDriftsLimitOutsideFences(t *testing.T) {
	t.Parallel()
	in := "> 2 diffs did not fit in this comment (GitHub's size limit): they are elsewhere\n" +
		"````diff\n+ did not fit in this comment (GitHub's size limit)\n```\n````\nclosing"
	want := "> 2 diffs did not fit in this comment (the size drift keeps a Gitea comment to): they are elsewhere\n" +
		"````diff\n+ did not fit in this comment (GitHub's size limit)\n```\n````\nclosing"
	if got := Flavour(in); got != want {
		t.Errorf("Flavour:\n%s\nwant:\n%s", got, want)
	}
}
