package write

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/report"
)

var (
	//go:embed templates/report.html.tmpl
	htmlTemplate string
	//go:embed templates/report.css
	htmlCSS string
	//go:embed templates/report.js
	htmlJS string

	htmlPage = template.Must(template.New("report.html.tmpl").Parse(htmlTemplate))
)

// htmlObject is one object as the HTML page shows it.
type htmlObject struct {
	report.Object
	Anchor, Mark string
	// Search is what the search box matches, lower-cased: identity, file, what
	// changed, risks, reasons.
	Search string
}

// htmlRef points to an object from the errors or the risks list.
type htmlRef struct {
	Anchor, Title, Where, Reason, Rule, Message string
}

type htmlTarget struct {
	Display, About string
	Objects        []htmlObject
	Kept           []report.Kept
	Notes          []string
}

type htmlView struct {
	Headline, Describe, Incomplete, Policy, Mismatch string
	Summary                                          report.Summary
	Errors, Risks                                    []htmlRef
	Categories, Kinds, Namespaces                    []string
	Targets                                          []htmlTarget
	Skipped                                          []report.Target
	Coverage                                         []htmlCoverageGroup
	CoverageLine                                     string
	CSS                                              template.CSS
	JS                                               template.JS
}

// HTML writes the report as one self-contained HTML page: the counts, the
// errors and the risks first, then every object of every target with its diff
// (unified or side by side), filters by category, kind, namespace and risk, and a
// search. report.Unchanged objects are listed but filtered out until asked for. Nothing on
// the page is loaded from elsewhere.
func HTML(w io.Writer, rep *report.Report) error {
	v := htmlView{Headline: headline(rep), Describe: rep.Describe(), Policy: rep.PolicyNote(), Mismatch: rep.MismatchNote(),
		Summary: rep.Summary, CSS: template.CSS(htmlCSS), JS: template.JS(htmlJS)}
	if !rep.Complete {
		v.Incomplete = rep.IncompleteNote(verbatim)
	}
	for _, s := range sections {
		v.Categories = append(v.Categories, s.category)
	}
	kinds, namespaces := map[string]bool{}, map[string]bool{}
	diffed, skipped := splitSkipped(rep)
	v.Skipped = skipped
	n := 0
	for _, t := range diffed {
		ht := htmlTarget{Display: t.Display(), About: about(t, verbatim), Kept: t.Kept, Notes: t.Notes}
		objs := append(append([]report.Object(nil), t.Objects...), t.Drift...)
		sort.SliceStable(objs, func(i, j int) bool { return htmlRank(objs[i]) < htmlRank(objs[j]) })
		for _, o := range objs {
			n++
			ho := htmlObject{Object: o, Anchor: fmt.Sprintf("o-%d", n), Mark: sectionOf(o.Category).mark}
			if o.Story == report.StoryDrift {
				ho.What = strings.TrimPrefix(ho.What+"; drift already in the cluster, not made by this change", "; ")
			}
			ho.Search = searchText(ho)
			if o.Kind != "" {
				kinds[o.Kind] = true
			}
			if o.Namespace != "" {
				namespaces[o.Namespace] = true
			}
			if o.Category == report.Error {
				why := errorReason(o)
				v.Errors = append(v.Errors, htmlRef{Anchor: ho.Anchor, Title: o.Title(), Where: o.Where(), Reason: why, Message: report.FirstLine(o.Error, 300)})
			}
			for _, r := range o.Risks {
				v.Risks = append(v.Risks, htmlRef{Anchor: ho.Anchor, Title: o.Title(), Rule: r.Rule, Message: r.Message})
			}
			ht.Objects = append(ht.Objects, ho)
		}
		v.Targets = append(v.Targets, ht)
	}
	v.Kinds, v.Namespaces = sortedKeys(kinds), sortedKeys(namespaces)
	if rep.Coverage != nil {
		v.CoverageLine = rep.Coverage.Line()
		for _, g := range coverageGroups(rep.Coverage) {
			hg := htmlCoverageGroup{Title: g.Title}
			for _, f := range g.Files {
				hg.Files = append(hg.Files, htmlCoveredFile{Name: f.Name(verbatim), Why: coverageWhy(f), Incomplete: f.Incomplete})
			}
			v.Coverage = append(v.Coverage, hg)
		}
	}
	if err := htmlPage.Execute(w, v); err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	return nil
}

// htmlCoverageGroup is the files of one coverage status on the page.
type htmlCoverageGroup struct {
	Title string
	Files []htmlCoveredFile
}

type htmlCoveredFile struct {
	Name, Why  string
	Incomplete bool
}

// htmlRank orders a target's objects on the page: errors, risky objects, then by
// category, unchanged last.
func htmlRank(o report.Object) int {
	switch {
	case o.Category == report.Error:
		return 0
	case len(o.Risks) > 0:
		return 1
	}
	return 2 + sectionIndex(o.Category)
}

// searchText is what the page's search box matches of an object, lower-cased.
func searchText(o htmlObject) string {
	parts := []string{o.Title(), o.Where(), o.What, o.Category, o.Inventory, string(o.ErrorReason)}
	for _, r := range o.Risks {
		parts = append(parts, r.Rule)
	}
	return strings.ToLower(strings.Join(parts, " "))
}

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
