package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
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
	Object
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
	Kept           []Kept
	Notes          []string
}

type htmlView struct {
	Headline, Describe, Incomplete, Policy, Mismatch string
	Summary                                          Summary
	Errors, Risks                                    []htmlRef
	Categories, Kinds, Namespaces                    []string
	Targets                                          []htmlTarget
	Skipped                                          []Target
	CSS                                              template.CSS
	JS                                               template.JS
}

// WriteHTML writes the report as one self-contained HTML page: the counts, the
// errors and the risks first, then every object of every target with its diff
// (unified or side by side), filters by category, kind, namespace and risk, and a
// search. Unchanged objects are listed but filtered out until asked for. Nothing on
// the page is loaded from elsewhere.
func WriteHTML(w io.Writer, rep *Report) error {
	v := htmlView{Headline: rep.headline(), Describe: rep.Describe(), Policy: rep.PolicyNote(), Mismatch: rep.MismatchNote(),
		Summary: rep.Summary, CSS: template.CSS(htmlCSS), JS: template.JS(htmlJS)}
	if !rep.Complete {
		v.Incomplete = rep.IncompleteNote()
	}
	for _, s := range sections {
		v.Categories = append(v.Categories, s.category)
	}
	kinds, namespaces := map[string]bool{}, map[string]bool{}
	diffed, skipped := rep.splitSkipped()
	v.Skipped = skipped
	n := 0
	for _, t := range diffed {
		ht := htmlTarget{Display: t.Display(), About: t.about(func(s string) string { return s }), Kept: t.Kept, Notes: t.Notes}
		objs := append(append([]Object(nil), t.Objects...), t.Drift...)
		sort.SliceStable(objs, func(i, j int) bool { return htmlRank(objs[i]) < htmlRank(objs[j]) })
		for _, o := range objs {
			n++
			ho := htmlObject{Object: o, Anchor: fmt.Sprintf("o-%d", n), Mark: sectionOf(o.Category).mark}
			if o.Story == StoryDrift {
				ho.What = strings.TrimPrefix(ho.What+"; drift already in the cluster, not made by this change", "; ")
			}
			ho.Search = searchText(ho)
			if o.Kind != "" {
				kinds[o.Kind] = true
			}
			if o.Namespace != "" {
				namespaces[o.Namespace] = true
			}
			if o.Category == Error {
				why := string(o.ErrorReason)
				if why == "" {
					why = Error
				}
				v.Errors = append(v.Errors, htmlRef{Anchor: ho.Anchor, Title: o.Title(), Where: o.Where(), Reason: why, Message: firstLine(o.Error, 300)})
			}
			for _, r := range o.Risks {
				v.Risks = append(v.Risks, htmlRef{Anchor: ho.Anchor, Title: o.Title(), Rule: r.Rule, Message: r.Message})
			}
			ht.Objects = append(ht.Objects, ho)
		}
		v.Targets = append(v.Targets, ht)
	}
	v.Kinds, v.Namespaces = sortedKeys(kinds), sortedKeys(namespaces)
	if err := htmlPage.Execute(w, v); err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	return nil
}

// htmlRank orders a target's objects on the page: errors, risky objects, then by
// category, unchanged last.
func htmlRank(o Object) int {
	switch {
	case o.Category == Error:
		return 0
	case len(o.Risks) > 0:
		return 1
	}
	return 2 + sectionIndex(o.Category)
}

func searchText(o htmlObject) string {
	parts := []string{o.Title(), o.Where(), o.What, o.Category, o.Inventory, string(o.ErrorReason)}
	for _, r := range o.Risks {
		parts = append(parts, r.Rule)
	}
	return strings.ToLower(strings.Join(parts, " "))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
