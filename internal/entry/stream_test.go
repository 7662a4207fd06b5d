package entry_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/entry/entrytest"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
	"github.com/drift-gitops/drift/internal/scrub"
)

// streamed builds in's report as preview.Run feeds a builder: every target learnt,
// then each result taken, in order, its entries kept in its place, and the report
// built from what is left by the same builder.
func streamed(t *testing.T, in entry.Input, b *entry.Builder) *report.Report {
	t.Helper()
	for _, ti := range in.Targets {
		b.Learn(ti.Known())
	}
	for i, ti := range in.Targets {
		left := ti
		left.Results, left.Split = nil, nil
		for j, r := range ti.Results {
			built, ok := b.Take(entry.One{Target: ti.Name, Rules: ti.Rules, Head: r})
			if !ok {
				t.Fatalf("%s: result %d not taken", ti.Name, j)
			}
			left.Built = append(left.Built, built)
		}
		for j, sp := range ti.Split {
			built, ok := b.Take(entry.One{Target: ti.Name, Rules: ti.Rules, Head: sp.Head, Split: true, Base: sp.Base})
			if !ok {
				t.Fatalf("%s: split %d not taken", ti.Name, j)
			}
			left.Built = append(left.Built, built)
		}
		in.Targets[i] = left
	}
	rep, err := entry.Build(in, b)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func jsonOf(t *testing.T, rep *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, tg := range rep.Targets {
		for _, o := range append(tg.Objects, tg.Drift...) {
			b.WriteString(o.FromYAML + o.ToYAML)
		}
	}
	return b.String()
}

// TestTakenEntriesAreTheEntriesOfWholeResults: entries built one result at a time, as
// the preview finishes them, make the report whole results make, byte for byte, and
// a Secret's value quoted by an object taken before it is scrubbed all the same.
func TestTakenEntriesAreTheEntriesOfWholeResults(t *testing.T) {
	t.Parallel()
	in := entrytest.SampleInput(t)
	quote := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quote, namespace: shop}\ndata: {copy: s3cr3t-new}\n"
	in.Targets[0].Results = append([]dryrun.Result{reporttest.Result(t, "shop/quote.yaml", 1, quote, "", quote)}, in.Targets[0].Results...)
	cm := func(color string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: split}\ndata: {color: " + color + "}\n"
	}
	base := reporttest.Result(t, "cm.yaml", 1, cm("blue"), cm("red"), cm("blue"))
	in.Targets = append(in.Targets, entry.TargetInput{Name: "split", Split: []entry.Split{{Head: reporttest.Result(t, "cm.yaml", 1, cm("green"), cm("red"), cm("green")), Base: &base}}})

	whole := jsonOf(t, entrytest.Build(t, in, entry.Options{}))
	got := jsonOf(t, streamed(t, in, entry.NewBuilder(entry.Options{}, scrub.New())))
	if got != whole {
		t.Errorf("the taken entries make another report:\n%s\nwhole:\n%s", got, whole)
	}
	if strings.Contains(got, "s3cr3t-new") || !strings.Contains(got, "+++ head/v1.ConfigMap.split.settings") {
		t.Errorf("a Secret's value leaks, or the split's entries are missing:\n%s", got)
	}
}
