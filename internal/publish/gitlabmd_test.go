package publish

import (
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/drift-gitops/drift/internal/report/write"
)

// hostile is text a repository controls, written as GitLab would act on it: quick
// actions at the start of a line, each kind of GitLab reference, a mention, a link
// and an image.
const hostile = "/close\n/merge\n/assign @root\n!123 ~bug ~\"big bug\" %v1.0 $42 &7 [[Home]] @root #12 group/project!4 " +
	"https://evil.example/x ![img](https://evil.example/i.png) [link](https://evil.example)\n/approve"

// reference is a GitLab reference, a mention or a wiki link as GitLab's filters
// find them in text outside code.
var reference = regexp.MustCompile(`(^|[^\w&])(@[\w.-]+|#\d+|![\d]+|~[\w"]|%[\w"]|\$\d+|&\d+)|\[\[|https?://`)

// TestGitLabNotesHoldNoQuickActionNorReference: a note (full, summary, under a
// budget, and its issue) of a report full of GitLab syntax is written with no line
// that starts with "/", and, as GitLab's markdown reads it (CommonMark with GFM's
// tables and autolinks), every reference, mention or link in it is drift's own or
// inside code, where GitLab links nothing. The stand-in, which records the quick
// actions GitLab would run, records none.
func TestGitLabNotesHoldNoQuickActionNorReference(t *testing.T) {
	t.Parallel()
	if found := outsideCode(t, hostile); len(found) < 10 {
		t.Fatalf("the checker finds only %q in the hostile text itself", found)
	}
	h := newGitLabHarness(t)
	rep := preview(t, added("tricky", map[string]string{"script": hostile, "one": "!1 ~x %y $1 &2 @z"}),
		modified("settings", map[string]string{"v": "/close"}, map[string]string{"v": hostile}), failed("broken", hostile))
	if _, err := h.publish(t, rep, Options{Comment: true, Check: true}); err != nil {
		t.Fatal(err)
	}
	delete(h.env, "CI_MERGE_REQUEST_IID")
	if _, err := h.publish(t, driftCheck(t, modified("settings", map[string]string{"v": "/close"}, map[string]string{"v": hostile})), Options{Issue: true}); err != nil {
		t.Fatal(err)
	}
	if len(h.srv.QuickActions) != 0 {
		t.Errorf("GitLab would run quick actions %v", h.srv.QuickActions)
	}
	bodies := []string{h.srv.Notes(7)[0].Body, h.srv.Issues[1].Description}
	m := newMarkdown(rep, "")
	for _, v := range []write.MarkdownOptions{summaryOnly, {MaxBytes: 3000}} {
		md, err := m.get(v)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, GitLabFlavour(md))
	}
	for i, body := range bodies {
		if !strings.Contains(body, "drift:") {
			t.Fatalf("body %d is not a report:\n%s", i, body)
		}
		for n, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "/") {
				t.Errorf("body %d, line %d starts with a slash: %q", i, n+1, line)
			}
		}
		for _, leak := range outsideCode(t, body) {
			t.Errorf("body %d: GitLab would read %q outside code", i, leak)
		}
	}
}

// outsideCode parses md and returns the references found in its text outside code
// spans, fences and HTML <code> elements, and the links that are not drift's own.
func outsideCode(t *testing.T, md string) []string {
	t.Helper()
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Linkify, extension.Strikethrough)).Parser().Parse(text.NewReader(src))
	var out []string
	check := func(s string) {
		for _, m := range reference.FindAllString(s, -1) {
			out = append(out, m+" in "+s)
		}
	}
	code := regexp.MustCompile(`(?s)<code>.*?</code>|<[^>]*>`)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			if d := string(n.Destination); !strings.HasPrefix(d, "https://gitlab.example/") && !strings.HasPrefix(d, "#") {
				out = append(out, "link to "+d)
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			out = append(out, "autolink "+string(n.URL(src)))
		case *ast.Image:
			out = append(out, "image "+string(n.Destination))
		case *ast.Text:
			check(string(n.Segment.Value(src)))
		case *ast.RawHTML:
			var b strings.Builder
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(src))
			}
			check(code.ReplaceAllString(b.String(), " "))
		case *ast.HTMLBlock:
			var b strings.Builder
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(src))
			}
			check(code.ReplaceAllString(b.String(), " "))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// TestGitLabFlavourEscapesSlashesAndKeepsFences: a line that starts with "/" is
// escaped outside a fence and indented inside one (of any length); the size note
// names GitLab; lines inside fences are otherwise untouched.
func TestGitLabFlavourEscapesSlashesAndKeepsFences(t *testing.T) {
	t.Parallel()
	in := "/close\n````text\n/merge\n```\n/still inside\nx did not fit in this comment (GitHub's size limit)\n````\n" +
		"> 2 diffs did not fit in this comment (GitHub's size limit): they are elsewhere\n/done"
	want := "\\/close\n````text\n /merge\n```\n /still inside\nx did not fit in this comment (GitHub's size limit)\n````\n" +
		"> 2 diffs did not fit in this note (GitLab's size limit): they are elsewhere\n\\/done"
	if got := GitLabFlavour(in); got != want {
		t.Errorf("GitLabFlavour:\n%s\nwant:\n%s", got, want)
	}
}
