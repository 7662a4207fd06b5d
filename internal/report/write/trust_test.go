package write_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/risk"
)

// pwn marks every hostile string: wherever it shows in a rendered report, it must be
// text inside <code> or <pre>, never a tag, an attribute or plain text.
const pwn = "PWN"

// hostileStrings are what a repository or a cluster can put in a report's strings:
// each breaks out of a code span, an HTML block or a table cell drift's markdown
// once used, and then writes a closing </details>, a heading, an image from another
// host, a link, mentions and issue references.
var hostileStrings = []string{
	"cr\r\r</details>\r\r### PWN no changes\r\r![PWN](https://evil.example/pwn.png) [PWN link](https://evil.example/)",
	"crlf\r\n\r\n<img src=\"https://evil.example/PWN.png\">\r\n\r\n#### PWN fake target\r\n",
	"lf\n\n</details>\n\n# PWN\n\n<a href=\"https://evil.example/\">PWN</a>",
	"separators\u2028\u2028# PWN\u2029\u2029[PWN](https://evil.example/)\u0085\u0085<img src=x alt=PWN>\v\f# PWN",
	"ticks ``` `` ` PWN ` </details> @PWNteam ```",
	"cells PWN | <img src=x alt=PWN> | @PWN/team |",
	"nginx:1.27 @PWNteam @PWNorg/team #4242 GH-1 PWN/repo#1 https://evil.example/PWN www.PWN.example",
	"entities &#64;PWNuser &#x23;42 &lt;img src=x alt=PWN&gt; <b>PWN</b>",
}

// hostileReport is a report whose every string from a repository or a cluster is
// hostile: target names, paths and contexts, identities, sources, what changed, risks,
// errors, warnings, diffs, notes, kept objects, skipped targets and the configuration.
func hostileReport() *report.Report {
	h := func(i int) string { return hostileStrings[i%len(hostileStrings)] }
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Ref: "main", Commit: "0123456789abcdef0123456789abcdef01234567",
		Summary: report.Summary{Add: 1, Modify: 2, Delete: 1, Error: 2, Risky: 1},
		Config:  &report.ConfigChange{File: "drift.yaml " + h(0), TrustedFrom: "main " + h(1), NotApplied: []string{h(2), h(3)}, Diff: "--- base\n+++ head\n@@ -1 +1 @@\n-" + h(4) + "\n+" + h(5) + "\n"},
	}
	var targets []report.Target
	n := 0
	next := func() string { n++; return h(n) }
	for i := 0; i < 2; i++ {
		// A target's name is in a table cell: the hostile string with '|' for one.
		t := report.Target{Name: "web " + h(5+i), Path: "apps/" + next(), Renderer: "kustomize", Context: "prod " + next(), Applier: "kubectl",
			Notes: []string{next()}, Kept: []report.Kept{{ID: object.ID{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "kept"}, Inventory: next(), Reason: next()}}}
		id := func() object.ID {
			return object.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web@PWNteam#42"}
		}
		t.Objects = []report.Object{
			{Category: report.Error, ID: id(), Source: "apps/" + next(), Document: 2, Error: next(), ErrorReason: reason.Invalid,
				Warnings: []dryrun.Message{{Reason: reason.ServerWarning, Message: next()}}},
			{Category: report.Modify, ID: id(), Source: "apps/web.yaml", What: next(), Risks: []risk.Finding{{Rule: "image-latest", Message: next()}},
				Diff: "--- live\n+++ merged\n@@ -1,2 +1,2 @@\n-  image: " + next() + "\n+  image: " + next() + "\n     ```` " + next() + "\n"},
			{Category: report.Add, ID: id(), Source: "apps/" + next(), What: next(), Diff: "+" + next() + "\n"},
			{Category: report.Delete, ID: id(), Source: "apps/web.yaml", Inventory: next(), Diff: "-" + next() + "\n"},
			{Category: report.Unchanged, ID: id(), Source: "apps/" + next()},
		}
		t.Drift = []report.Object{{Category: report.Modify, Story: report.StoryDrift, ID: id(), Source: "apps/web.yaml", What: next(), Diff: " " + next() + "\n"}}
		targets = append(targets, t)
	}
	targets = append(targets, report.Target{Name: "skipped " + next(), Skipped: next()})
	rep.Targets = targets
	return rep
}

// cmarkGFM finds GitHub's markdown renderer; outside CI a machine without it skips the
// test (hack/cmark-gfm.sh installs it, and make test runs that), in CI it must be there.
func cmarkGFM(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("cmark-gfm"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("cmark-gfm is needed to render the markdown as GitHub does (hack/cmark-gfm.sh, apt-get install cmark-gfm)")
	}
	t.Skip("cmark-gfm is not installed (hack/cmark-gfm.sh, apt-get install cmark-gfm); CI runs this test")
	return ""
}

// renderGFM renders markdown as GitHub does: cmark-gfm with GitHub's extensions, raw
// HTML passed through (GitHub's sanitizer runs after, and is not what keeps drift's
// strings in their place).
func renderGFM(t *testing.T, bin, md string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink", "-e", "tagfilter")
	cmd.Stdin = strings.NewReader(md)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v\n%s", err, stderr.String())
	}
	return string(out)
}

var (
	// References GitHub links in text outside code: mentions, issues, URLs.
	referenceText = regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]|\bGH-[0-9]|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]|(?i)https?://|\bwww\.`)
	driftAnchor   = regexp.MustCompile(`^#?drift-[0-9]+$`)
)

// checkRendered fails for anything in page, the HTML cmark-gfm rendered, that drift
// did not write: an image, a link but to drift's own anchors, a heading but drift's
// own (one h3 "drift: …" for a report, h4 starting with a target's <code>), a
// </details> closing nothing, or hostile or reference text outside <code> and <pre>.
func checkRendered(t *testing.T, what, page string, maxH4 int) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(page))
	var inCode, details, h3, h4 int
	var h3Text *strings.Builder // the open h3's text
	afterH4 := false            // the last token opened an h4
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		if afterH4 && !(tt == html.StartTagToken && tok.Data == "code") {
			t.Errorf("%s: an h4 that does not start with a target's name in <code>: %s", what, tok)
		}
		afterH4 = false
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			for _, a := range tok.Attr {
				if strings.Contains(a.Key+a.Val, pwn) || strings.Contains(a.Key, strings.ToLower(pwn)) {
					t.Errorf("%s: a tag's attribute holds hostile text: %s", what, tok)
				}
			}
			switch tok.Data {
			case "img", "script", "iframe", "style", "form", "input", "textarea", "object", "embed":
				t.Errorf("%s: an injected <%s>: %s", what, tok.Data, tok)
			case "a":
				for _, a := range tok.Attr {
					if (a.Key != "href" && a.Key != "name") || !driftAnchor.MatchString(a.Val) {
						t.Errorf("%s: a link drift did not write: %s", what, tok)
					}
				}
			case "code", "pre":
				inCode++
			case "details":
				details++
			case "h1", "h2", "h5", "h6":
				t.Errorf("%s: a heading drift never writes: %s", what, tok)
			case "h3":
				h3++
				h3Text = &strings.Builder{}
			case "h4":
				h4++
				afterH4 = true
			}
		case html.EndTagToken:
			switch tok.Data {
			case "code", "pre":
				inCode--
			case "details":
				if details--; details < 0 {
					t.Errorf("%s: a </details> closing nothing", what)
					details = 0
				}
			case "h3":
				if h3Text != nil && !strings.HasPrefix(h3Text.String(), "drift: ") {
					t.Errorf("%s: an h3 drift did not write: %q", what, h3Text.String())
				}
				h3Text = nil
			}
		case html.TextToken:
			if h3Text != nil {
				h3Text.WriteString(tok.Data)
			}
			if inCode == 0 && (strings.Contains(tok.Data, pwn) || referenceText.MatchString(tok.Data)) {
				t.Errorf("%s: hostile or reference text outside code: %q", what, tok.Data)
			}
		}
	}
	if details != 0 {
		t.Errorf("%s: %d <details> left open", what, details)
	}
	if h3 > 1 || h4 > maxH4 {
		t.Errorf("%s: %d h3 and %d h4 headings, drift writes at most 1 and %d", what, h3, h4, maxH4)
	}
}

// TestTrustMarkdownRenderedByGitHubHoldsNoInjection renders the markdown of a report
// whose every outside string is hostile, in each variant GitHub shows (the job
// summary, the pull request comment within its budget, the summary-only comment and
// check summary, the check run's text, the drift issue's body), with GitHub's
// renderer: no image, no link but to drift's own anchors, no heading drift did not
// write, no stray </details>, and every hostile string, mention, issue reference and
// URL inside <code> or <pre>.
func TestTrustMarkdownRenderedByGitHubHoldsNoInjection(t *testing.T) {
	bin := cmarkGFM(t)
	rep := hostileReport()
	diffed := 0
	for _, t := range rep.Targets {
		if t.Skipped == "" {
			diffed++
		}
	}
	for name, opts := range map[string]write.MarkdownOptions{
		"job summary":  {MaxBytes: 1 << 20, ShowUnchanged: true},
		"comment":      {MaxBytes: 65536},
		"summary only": {SummaryOnly: true},
		"check text":   {MaxBytes: 65536, AfterComment: 6000},
		"small budget": {MaxBytes: 6000},
	} {
		var md bytes.Buffer
		if err := write.Markdown(&md, rep, opts); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), pwn) {
			t.Fatalf("%s: the markdown shows no hostile string", name)
		}
		page := renderGFM(t, bin, md.String())
		checkRendered(t, name, page, diffed)
		if t.Failed() {
			t.Logf("%s markdown:\n%s\nrendered:\n%s", name, md.String(), page)
			return
		}
	}
}

// TestTrustHTMLReportInABrowserHoldsNoInjection opens the HTML report of the hostile
// report in headless Chromium, with the search box, the filters and the side-by-side
// view fed hostile text through the URL: the page's DOM holds no element drift did not
// write (every hostile string is text), and the page requests nothing from the hosts
// the hostile strings name. A control page with an image from such a host shows that
// the browser's log would show the request.
func TestTrustHTMLReportInABrowserHoldsNoInjection(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	control := filepath.Join(dir, "control.html")
	if err := os.WriteFile(control, []byte(`<!DOCTYPE html><img src="https://evil.example/PWN-control.png"><p data-ready="1">`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, requests := openLogged(t, browser, "file://"+control); len(requests) == 0 {
		t.Fatal("the browser's log shows no request for the control page's image: the test cannot see requests")
	}

	var buf bytes.Buffer
	if err := write.HTML(&buf, hostileReport()); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fragment := range []string{
		"#category=add,modify,delete,error,unchanged&view=split",
		"#category=add,modify,delete,error,unchanged&q=%3Cimg%20src%3Dhttps%3A%2F%2Fevil.example%2FPWN.png%3E&kind=%3Cb%3EPWN&action=PWN",
		"#o-2",
	} {
		dom, requests := openLogged(t, browser, "file://"+page+fragment)
		if !strings.Contains(dom, `data-ready="1"`) {
			t.Fatalf("%s: the page's script did not finish", fragment)
		}
		checkDOM(t, fragment, dom)
		for _, r := range requests {
			t.Errorf("%s: the page requested %s", fragment, r)
		}
	}
}

// openLogged opens url in headless Chromium and returns the DOM once the page's script
// ran, and the requests for the hostile strings' host (evil.example) or holding their
// mark that the browser's network log shows (its own background requests aside).
func openLogged(t *testing.T, browser, url string) (dom string, requests []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=1", "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		_, req, ok := strings.Cut(line, "NotifyBeforeURLRequest: ")
		if ok && (strings.Contains(req, "evil.example") || strings.Contains(req, pwn)) {
			requests = append(requests, req)
		}
	}
	return string(out), requests
}

// htmlTags are the elements the HTML report's template and script create.
var htmlTags = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "header": true,
	"h1": true, "h2": true, "h3": true, "p": true, "ul": true, "li": true, "b": true, "section": true, "a": true, "span": true,
	"code": true, "form": true, "fieldset": true, "label": true, "input": true, "select": true, "option": true, "output": true,
	"details": true, "summary": true, "div": true, "pre": true, "script": true, "table": true, "tbody": true, "tr": true, "td": true}

// checkDOM fails for an element the report does not create, an attribute holding
// hostile text where it is not a data-* or title value (which html/template escapes and
// the page only reads as text), or a link out of the page.
func checkDOM(t *testing.T, what, dom string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(dom))
	texts := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			if !htmlTags[tok.Data] {
				t.Errorf("%s: an element the report does not create: %s", what, tok)
			}
			for _, a := range tok.Attr {
				text := a.Key == "title" || a.Key == "value" || strings.HasPrefix(a.Key, "data-")
				if strings.Contains(a.Val, pwn) && !text {
					t.Errorf("%s: hostile text in attribute %s of %s", what, a.Key, tok)
				}
				if (a.Key == "href" || a.Key == "src" || a.Key == "action") && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("%s: a reference out of the page: %s", what, tok)
				}
			}
		case html.TextToken:
			if strings.Contains(tok.Data, pwn) {
				texts++
			}
		}
	}
	if texts == 0 {
		t.Errorf("%s: the page shows no hostile string", what)
	}
}
