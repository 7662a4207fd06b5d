package write_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/report/write/trusttest"
)

// TestTrustHostileReportCoversTheModel: the hostile report the trust tests render
// holds a hostile string in every string field of the model that a repository or a
// cluster controls, and takes every path a bool opens (targets the change touches
// that were not previewed, an incomplete report, a failed policy).
func TestTrustHostileReportCoversTheModel(t *testing.T) {
	t.Parallel()
	trusttest.Covers(t, trusttest.Report())
}

// TestTrustMarkdownRenderedByGitHubHoldsNoInjection renders the markdown of a report
// whose every outside string is hostile, a preview's and a drift check's, in each
// variant GitHub shows (the job summary, the pull request comment within its budget,
// the summary-only comment and check summary, the check run's text, the drift
// issue's body), with GitHub's renderer: no image, no link but to drift's own
// anchors, no heading drift did not write, no stray </details>, and every hostile
// string, mention, issue reference and URL inside <code> or <pre>.
func TestTrustMarkdownRenderedByGitHubHoldsNoInjection(t *testing.T) {
	bin := trusttest.GFM(t)
	preview := trusttest.Report()
	check := trusttest.Report()
	check.Kind = report.KindDrift
	for kind, rep := range map[string]*report.Report{"preview": preview, "drift check": check} {
		for name, opts := range map[string]write.MarkdownOptions{
			"job summary":  {MaxBytes: 1 << 20, ShowUnchanged: true},
			"comment":      {MaxBytes: 65536},
			"summary only": {SummaryOnly: true},
			"check text":   {MaxBytes: 65536, AfterComment: 6000},
			"small budget": {MaxBytes: 6000},
		} {
			name = kind + ", " + name
			var md bytes.Buffer
			if err := write.Markdown(&md, rep, opts); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), trusttest.Mark) {
				t.Fatalf("%s: the markdown shows no hostile string", name)
			}
			page := trusttest.Render(t, bin, md.String())
			trusttest.Check(t, name, page, trusttest.Page{MaxH4: trusttest.Diffed(rep)})
			if t.Failed() {
				t.Logf("%s markdown:\n%s\nrendered:\n%s", name, md.String(), page)
				return
			}
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
	if err := write.HTML(&buf, trusttest.Report()); err != nil {
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
		if ok && (strings.Contains(req, "evil.example") || strings.Contains(req, trusttest.Mark)) {
			requests = append(requests, req)
		}
	}
	return string(out), requests
}

// htmlTags are the elements the HTML report's template and script create.
var htmlTags = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "header": true,
	"h1": true, "h2": true, "h3": true, "p": true, "ul": true, "li": true, "b": true, "strong": true, "section": true, "a": true, "span": true,
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
				if strings.Contains(a.Val, trusttest.Mark) && !text {
					t.Errorf("%s: hostile text in attribute %s of %s", what, a.Key, tok)
				}
				if (a.Key == "href" || a.Key == "src" || a.Key == "action") && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("%s: a reference out of the page: %s", what, tok)
				}
			}
		case html.TextToken:
			if strings.Contains(tok.Data, trusttest.Mark) {
				texts++
			}
		}
	}
	if texts == 0 {
		t.Errorf("%s: the page shows no hostile string", what)
	}
}
