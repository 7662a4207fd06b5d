package write_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/report/write"
)

// chromium finds Debian's chromium; outside CI a machine without it skips the browser
// tests (make test installs nothing), in CI it must be there.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is needed for the HTML report's browser test (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	return ""
}

// dom opens the page in headless Chromium at fragment and returns the DOM once its
// script has run.
func dom(t *testing.T, browser, page, fragment string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--dump-dom", "file://"+page+fragment)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), `data-ready="1"`) {
		t.Fatalf("the page's script did not finish:\n%s", stderr.String())
	}
	return string(out)
}

var (
	objectTag = regexp.MustCompile(`<details class="obj [^"]*"[^>]*>`)
	shownAttr = regexp.MustCompile(`data-shown="(\d+)"`)
)

// visible are the ids of the objects the DOM shows.
func visible(page string) []string {
	var out []string
	for _, tag := range objectTag.FindAllString(page, -1) {
		if strings.Contains(tag, " hidden") {
			continue
		}
		out = append(out, regexp.MustCompile(`id="([^"]+)"`).FindStringSubmatch(tag)[1])
	}
	return out
}

// TestHTMLReportInABrowser opens the report in headless Chromium: the counts, every
// changed object, the filters (category, kind, namespace, risk, search), and no
// Secret value or external URL in the page.
func TestHTMLReportInABrowser(t *testing.T) {
	browser := chromium(t)
	rep := build(t, entrytest.SampleInput(t), entry.Options{})
	var buf bytes.Buffer
	if err := write.HTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{"s3cr3t", reporttest.B64("s3cr3t-old"), reporttest.B64("s3cr3t-new"), "@someone", "http://", "https://", "src="} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	all := dom(t, browser, page, "")
	for id, want := range map[string]int{"count-add": 1, "count-modify": 2, "count-unchanged": 1, "count-error": 2, "count-risky": 1} {
		m := regexp.MustCompile(`id="` + id + `">(\d+)<`).FindStringSubmatch(all)
		if m == nil || m[1] != strconv.Itoa(want) {
			t.Errorf("%s = %v, want %d", id, m, want)
		}
	}
	for _, title := range []string{"v1 Service shop/web", "v1 ConfigMap shop/settings", "v1 Secret shop/db", "v1 Secret shop/tls", "(unreadable document)"} {
		if !strings.Contains(all, `<span class="title">`+title+`</span>`) {
			t.Errorf("the page lacks %s", title)
		}
	}
	// By default every object but the unchanged one is shown.
	if got := visible(all); len(got) != 5 || shownAttr.FindStringSubmatch(all)[1] != "5" {
		t.Errorf("shown by default: %v", got)
	}
	for _, c := range []struct {
		fragment string
		want     int
		title    string
	}{
		{"#category=add,modify,delete,error,unchanged", 6, ""},
		{"#category=modify", 2, ""},
		{"#category=add,modify,delete,error&risky=1", 1, "v1 Secret shop/db"},
		{"#category=add,modify,delete,error&kind=Service", 1, "v1 Service shop/web"},
		{"#category=add,modify,delete,error,unchanged&namespace=shop&q=deploy", 1, "apps/v1 Deployment shop/web"},
		{"#category=add,modify,delete,error&q=settings", 1, "v1 ConfigMap shop/settings"},
	} {
		got := dom(t, browser, page, c.fragment)
		ids := visible(got)
		if len(ids) != c.want {
			t.Errorf("%s: %d objects shown, want %d", c.fragment, len(ids), c.want)
			continue
		}
		if c.title != "" {
			re := regexp.MustCompile(`id="` + ids[0] + `"[^>]*>\s*<summary><span class="mark">[^<]*</span> <span class="title">([^<]*)</span>`)
			if m := re.FindStringSubmatch(got); m == nil || m[1] != c.title {
				t.Errorf("%s: shows %v, want %s", c.fragment, m, c.title)
			}
		}
	}
}
