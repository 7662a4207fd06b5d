// Package trusttest is what the trust tests of the writers and of publishing share:
// a report whose every string from a repository or a cluster is hostile, a check that
// it still is for every field of the model, and GitHub's markdown renderer
// (cmark-gfm with GitHub's extensions) with a check of what it renders.
package trusttest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/report"
)

// Mark marks every hostile string: wherever it shows in a rendered report, it must be
// text inside <code> or <pre>, never a tag, an attribute or plain text.
const Mark = "PWN"

// Strings are what a repository or a cluster can put in a report's strings: each
// breaks out of a code span, an HTML block or a table cell drift's markdown once
// used, or is plain markdown, and then writes a closing </details>, a heading, an
// image from another host, a link, mentions and issue references.
var Strings = []string{
	"cr\r\r</details>\r\r### PWN no changes\r\r![PWN](https://evil.example/pwn.png) [PWN link](https://evil.example/)",
	"crlf\r\n\r\n<img src=\"https://evil.example/PWN.png\">\r\n\r\n#### PWN fake target\r\n",
	"lf\n\n</details>\n\n# PWN\n\n<a href=\"https://evil.example/\">PWN</a>",
	"separators\u2028\u2028# PWN\u2029\u2029[PWN](https://evil.example/)\u0085\u0085<img src=x alt=PWN>\v\f# PWN",
	"ticks ``` `` ` PWN ` </details> @PWNteam ```",
	"cells PWN | <img src=x alt=PWN> | @PWN/team | x\\|@PWN ![PWN](https://evil.example/cell.png)",
	"nginx:1.27 @PWNteam @PWNorg/team #4242 GH-1 PWN/repo#1 https://evil.example/PWN www.PWN.example",
	"entities &#64;PWNuser &#x23;42 &lt;img src=x alt=PWN&gt; <b>PWN</b>",
	"image nginx:1.25 → nginx:1.27 @PWNteam #4242 ![PWN](https://evil.example/PWN.png)",
	"- [x] PWN task @PWNteam\n- [ ] #4242 <details><summary>PWN</summary>",
}

// Report is a report whose every string from a repository or a cluster is hostile:
// refs, target names (skipped ones the change touches among them), paths and
// contexts, identities, sources, what changed, field changes, risks, errors,
// warnings, diffs, notes, kept objects, skipped targets and the configuration. It
// takes every path the writers have: incomplete, failing its policy, on an ephemeral
// server against a base, with an object of each category and drift already there.
// Covers checks that it still reaches every field of the model.
func Report() *report.Report {
	h := func(i int) string { return Strings[i%len(Strings)] }
	n := 0
	next := func() string { n++; return h(n) }
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Ref: "feature " + next(), Commit: "0123456789abcdef0123456789abcdef01234567",
		Cluster: report.ClusterEphemeral, Base: "main " + next(), BaseCommit: "89abcdef0123456789abcdef0123456789abcdef",
		Summary: report.Summary{Add: 2, Modify: 2, Delete: 2, Error: 2, Unchanged: 2, Risky: 2, NotPreviewed: 4, ApplierMismatch: 1},
		Config: &report.ConfigChange{File: "drift.yaml " + next(), TrustedFrom: "main " + next(), NotApplied: []string{next(), next()},
			Diff: "--- base\n+++ head\n@@ -1 +1 @@\n-" + next() + "\n+" + next() + "\n"},
		Shard:  &report.Shard{Index: 1, Count: 2, Plan: "0123456789abcdef", By: "cluster"},
		Policy: &report.Policy{FailOn: []string{"error", "risk"}, Failed: true, Because: []string{"2 errors", "2 risky objects"}},
	}
	for i := 0; i < 2; i++ {
		id := func() report.ID {
			return report.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop " + next(), Name: "web@PWNteam#42 " + next()}
		}
		// One object's every part of its identity is hostile (a custom resource's).
		odd := report.ID{Group: "x.example " + next(), Version: "v1 " + next(), Kind: "Widget " + next(), Namespace: next(), Name: next()}
		obj := func(category string, id report.ID) report.Object {
			o := report.NewObject(id, "apps/"+next(), 2)
			o.Category, o.FromYAML, o.ToYAML, o.File = category, next(), next(), next()
			return o
		}
		// A target's name is in a table cell: one is the hostile string with '|' and '\|' in it.
		t := report.Target{Name: "web " + h(5+i), Path: "apps/" + next(), Renderer: "kustomize", Context: "prod " + next(), Applier: "kubectl",
			Notes: []string{next()}, Kept: []report.Kept{{ID: id(), Inventory: next(), Reason: next()}}}
		failed := obj(report.Error, id())
		failed.Error, failed.ErrorReason = next(), reason.Invalid
		failed.Warnings = []report.Message{{Reason: reason.ServerWarning, Message: next()}}
		modified := obj(report.Modify, odd)
		modified.What, modified.Risks = next(), []report.Risk{{Rule: "image-latest", Message: next()}}
		modified.Changes = []report.FieldChange{{Path: "spec.template.spec.containers[0].image " + next(), Op: report.OpChange, Before: next(), After: next()}}
		modified.Diff = "--- live\n+++ merged\n@@ -1,2 +1,2 @@\n-  image: " + next() + "\n+  image: " + next() + "\n     ```` " + next() + "\n"
		added := obj(report.Add, id())
		added.What, added.Diff = next(), "+"+next()+"\n"
		deleted := obj(report.Delete, id())
		deleted.Inventory, deleted.Diff = next(), "-"+next()+"\n"
		t.Objects = []report.Object{failed, modified, added, deleted, obj(report.Unchanged, id())}
		drift := obj(report.Modify, id())
		drift.Story, drift.What, drift.Diff, drift.Sides = report.StoryDrift, next(), " "+next()+"\n", report.SidesDrift
		drift.Warnings = []report.Message{{Reason: reason.ApplierMismatch, Message: next()}}
		t.Drift = []report.Object{drift}
		rep.Targets = append(rep.Targets, t)
	}
	rep.Targets = append(rep.Targets, report.Target{Name: "skipped " + next(), Skipped: next()})
	// The incomplete note names the targets the change touches that were not previewed.
	for i := 0; i < rep.Summary.NotPreviewed; i++ {
		rep.Targets = append(rep.Targets, report.Target{Name: next(), Skipped: next(), NotPreviewed: true})
	}
	// The coverage names files and targets of the repository, and says why.
	rep.Summary.NotCovered = 2
	rep.Coverage = &report.Coverage{Files: []report.CoveredFile{
		{Path: "apps/" + next(), Status: report.CoveragePreviewed, Targets: []report.CoverageTarget{{Name: rep.Targets[0].Name, Previewed: true}}},
		{Path: "apps/" + next(), RenamedFrom: "old/" + next(), Status: report.CoverageNotPreviewed,
			Targets: []report.CoverageTarget{{Name: rep.Targets[2].Name, Why: next()}}, Why: next()},
		{Path: "gone/" + next(), Removed: true, Status: report.CoverageNotPreviewed, RemovedTargets: []string{next()}, Why: next()},
		{Path: "overlays/" + next(), Status: report.CoverageReadByNothing, Why: next(), Incomplete: true},
		{Path: "overlays/" + next(), Removed: true, Status: report.CoverageReadByNothing, Why: next(), Incomplete: true},
		{Path: "docs/" + next(), Status: report.CoverageNotDeployed, Why: next()},
	}}
	return rep
}

// ownFields are the strings of the model that drift decides from a set of its own
// (validated on the way in), which need not be hostile; any other string field must
// hold a hostile string somewhere in Report.
var ownFields = []string{
	"Report.SchemaVersion", "Report.Kind", "CoveredFile.Status", "Report.Commit", "Report.BaseCommit", "Report.Cluster",
	"Shard.Plan", "Shard.By", "Policy.FailOn", "Policy.Because", "Target.Renderer", "Target.Applier",
	"Object.Category", "Object.Story", "Object.ErrorReason", "Message.Reason", "Risk.Rule",
	"FieldChange.Op", "Sides.From", "Sides.To",
}

// textBools are the model's bools, each with the value that makes a report write more
// (a note, a line): Report must take it somewhere.
var textBools = map[string]bool{"Report.Complete": false, "Target.NotPreviewed": true, "Policy.Failed": true,
	"CoveredFile.Removed": true, "CoveredFile.Incomplete": true, "CoverageTarget.Previewed": true}

// Covers fails unless rep (Report's) reaches every field of the model: every string
// field but drift's own holds a hostile string somewhere, every bool takes the value
// that writes more somewhere, and no pointer is nil. A field added to the model fails
// it until the hostile report fills it.
func Covers(t *testing.T, rep *report.Report) {
	t.Helper()
	hostile, bools := map[string]bool{}, map[string]bool{}
	seen := map[string]bool{}
	var walk func(name string, v reflect.Value)
	walk = func(name string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				t.Errorf("%s is nil in the hostile report: its fields are not covered", name)
				return
			}
			walk(name, v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				field := v.Type().Name() + "." + f.Name
				if f.Anonymous {
					field = v.Type().Name()
				}
				walk(field, v.Field(i))
			}
		case reflect.Slice:
			seen[name] = true
			for i := 0; i < v.Len(); i++ {
				walk(name, v.Index(i))
			}
		case reflect.String:
			seen[name] = true
			hostile[name] = hostile[name] || strings.Contains(v.String(), Mark)
		case reflect.Bool:
			seen[name] = true
			want, ok := textBools[name]
			if !ok {
				t.Errorf("%s: a bool trusttest does not know: add it to textBools with the value that makes a report write more", name)
			}
			bools[name] = bools[name] || v.Bool() == want
		}
	}
	walk("Report", reflect.ValueOf(rep))
	for name := range seen {
		if _, isBool := textBools[name]; isBool {
			if !bools[name] {
				t.Errorf("%s is never %t in the hostile report: what it writes is not covered", name, textBools[name])
			}
			continue
		}
		if _, isString := hostile[name]; isString && !hostile[name] && !slices.Contains(ownFields, name) {
			t.Errorf("%s holds no hostile string in the hostile report", name)
		}
	}
}

// GFM finds GitHub's markdown renderer; outside CI a machine without it skips the
// test (hack/cmark-gfm.sh installs it, and make test runs that), in CI it must be there.
func GFM(t *testing.T) string {
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

// Render renders markdown as GitHub does: cmark-gfm with GitHub's extensions, raw
// HTML passed through (GitHub's sanitizer runs after, and is not what keeps drift's
// strings in their place).
func Render(t *testing.T, bin, md string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink", "-e", "tagfilter", "-e", "tasklist")
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
	// referenceText is what GitHub links in text outside <code>, <pre> and <a>:
	// mentions, issues, URLs.
	referenceText = regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]|\bGH-[0-9]|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]|(?i)https?://|\bwww\.`)
	driftAnchor   = regexp.MustCompile(`^#?drift-[0-9]+$`)
)

// Page says what drift itself writes in a rendered page besides its anchors.
type Page struct {
	// MaxH4 is the number of h4 headings drift writes at most (one per target).
	MaxH4 int
	// Links are the URLs drift links to (the workflow run, the job's artifacts).
	Links []string
}

// Check fails for anything in page, the HTML cmark-gfm rendered, that drift did not
// write: an image or another active element, a link but to drift's own anchors and
// p.Links, a heading but drift's own (one h3 "drift: …" for a report, h4 starting with
// a target's <code>), a </details> closing nothing, a hostile string in a tag or an
// attribute, or hostile or reference text (a mention, an issue, a URL) outside <code>
// and <pre>, where GitHub would link it.
func Check(t *testing.T, what, page string, p Page) {
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
			if strings.Contains(tok.Data, strings.ToLower(Mark)) {
				t.Errorf("%s: a tag drift did not write: %s", what, tok)
			}
			for _, a := range tok.Attr {
				if strings.Contains(a.Key+a.Val, Mark) || strings.Contains(a.Key, strings.ToLower(Mark)) {
					t.Errorf("%s: a tag's attribute holds hostile text: %s", what, tok)
				}
			}
			switch tok.Data {
			case "img", "script", "iframe", "style", "form", "input", "textarea", "object", "embed", "video", "audio", "source", "picture":
				t.Errorf("%s: an injected <%s>: %s", what, tok.Data, tok)
			case "a":
				for _, a := range tok.Attr {
					if (a.Key != "href" && a.Key != "name") || !(driftAnchor.MatchString(a.Val) || a.Key == "href" && slices.Contains(p.Links, a.Val)) {
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
			if inCode == 0 && (strings.Contains(tok.Data, Mark) || referenceText.MatchString(tok.Data)) {
				t.Errorf("%s: hostile or reference text outside code: %q", what, tok.Data)
			}
		}
	}
	if details != 0 {
		t.Errorf("%s: %d <details> left open", what, details)
	}
	if h3 > 1 || h4 > p.MaxH4 {
		t.Errorf("%s: %d h3 and %d h4 headings, drift writes at most 1 and %d", what, h3, h4, p.MaxH4)
	}
}

// Diffed counts the targets of rep that were diffed: each has one h4 heading.
func Diffed(rep *report.Report) int {
	n := 0
	for _, t := range rep.Targets {
		if t.Skipped == "" {
			n++
		}
	}
	return n
}
