package write_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
	"github.com/drift-gitops/drift/internal/report/write/trusttest"
)

// TestCoverageAsGitHubRendersIt: rendered as GitHub renders markdown, the coverage
// of the change is an open details block (a file is read by nothing) listing every
// file in code, the one read by nothing first and marked, each previewed file with
// the target that previewed it, and the incomplete note names the file.
func TestCoverageAsGitHubRendersIt(t *testing.T) {
	bin := trusttest.GFM(t)
	rep := build(t, entrytest.SampleInput(t), entry.Options{})
	var md bytes.Buffer
	if err := write.Markdown(&md, rep, write.MarkdownOptions{MaxBytes: 65536}); err != nil {
		t.Fatal(err)
	}
	page := trusttest.Render(t, bin, md.String())
	block := regexp.MustCompile(`(?s)<details open>\s*<summary>Coverage of the change: 8 files changed: 2 previewed, 3 not previewed, 1 read by nothing, 2 deploying nothing</summary>(.*?)</details>`).FindStringSubmatch(page)
	if block == nil {
		t.Fatalf("no open coverage block in the rendered comment:\n%s", page)
	}
	body := block[1]
	for _, want := range []string{
		"<li>⚠️ <code>overlays/extra/role.yaml</code>: <code>no target drift found reads it, and a controller could deploy from it</code></li>",
		"<li><code>shop/config.yaml</code>: by <code>shop</code></li>",
		"<li><code>shop/svc.yaml</code> (renamed from <code>shop/service.yaml</code>): by <code>shop</code></li>",
		"<li><code>billing/app.yaml</code>: <code>billing: its source OCIRepository flux-system/billing is not this repository</code></li>",
		"<li><code>legacy/app.yaml</code> (removed):",
		"<li><code>shop/tls.yaml</code>: <code>shop: 1 object from it could not be previewed</code></li>",
		"<li><code>terraform/main.tf</code>: <code>drift.yaml's deploysNothing names it</code></li>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the coverage block lacks %s:\n%s", want, body)
		}
	}
	if strings.Index(body, "overlays/extra/role.yaml") > strings.Index(body, "shop/config.yaml") {
		t.Error("the file read by nothing is not listed first")
	}
	if !strings.Contains(page, "no target drift found reads (<code>overlays/extra/role.yaml</code>: see the coverage") {
		t.Error("the incomplete note does not name the file read by nothing")
	}
}

// TestCoverageInABrowser: the HTML page shows the coverage of the change, the file
// read by nothing marked.
func TestCoverageInABrowser(t *testing.T) {
	browser := chromium(t)
	rep := build(t, entrytest.SampleInput(t), entry.Options{})
	var buf bytes.Buffer
	if err := write.HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := dom(t, browser, page, "")
	section := regexp.MustCompile(`(?s)<section id="coverage">(.*?)</section>`).FindStringSubmatch(dom)
	if section == nil {
		t.Fatal("the page has no coverage section")
	}
	for _, want := range []string{
		"<p>8 files changed: 2 previewed, 3 not previewed, 1 read by nothing, 2 deploying nothing</p>",
		`<li class="incomplete"><code>overlays/extra/role.yaml</code>: no target drift found reads it, and a controller could deploy from it</li>`,
		"<li><code>shop/config.yaml</code>: by shop</li>",
		"<h3>Deploying nothing (2)</h3>",
	} {
		if !strings.Contains(section[1], want) {
			t.Errorf("the coverage section lacks %s:\n%s", want, section[1])
		}
	}
}

// TestCoverageUnderACommentsBudget: a change of 300 files lists, under a comment's
// budget, every file read by nothing up to 50 and 20 of the previewed, each cut
// saying how many more and where they are; within the budget. The job summary
// lists them all.
func TestCoverageUnderACommentsBudget(t *testing.T) {
	in := entrytest.SampleInput(t)
	in.Coverage, in.Targets[0].Renderer = nil, "plain"
	for i := 0; i < 150; i++ {
		in.Coverage = append(in.Coverage, report.CoverageInput{Path: fmt.Sprintf("overlays/o%03d/role.yaml", i), Deploys: true},
			report.CoverageInput{Path: fmt.Sprintf("shop/f%03d.yaml", i), Readers: []string{"shop"}})
	}
	rep := build(t, in, entry.Options{})
	var comment, summary bytes.Buffer
	if err := write.Markdown(&comment, rep, write.MarkdownOptions{MaxBytes: 65536, FullReport: "the job summary"}); err != nil {
		t.Fatal(err)
	}
	if err := write.Markdown(&summary, rep, write.MarkdownOptions{MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	c := comment.String()
	if comment.Len() > 65536 || strings.Count(c, "- ⚠️ `overlays/") != 50 || !strings.Contains(c, "- … and 100 more: see the job summary and the JSON report") ||
		!strings.Contains(c, "- … and 130 more: see the job summary and the JSON report") {
		t.Errorf("the comment (%d bytes) does not cut the lists as it should:\n%s", comment.Len(), c)
	}
	if s := summary.String(); strings.Count(s, "- ⚠️ `overlays/") != 150 || strings.Count(s, "`shop/f") != 150 || strings.Contains(s, "more: see the job summary") {
		t.Errorf("the job summary does not list every file")
	}
}
