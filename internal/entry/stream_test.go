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

// streamed builds in's report as preview.Run feeds a builder: every target prepared,
// then each result taken, in order, and the report built from what is left by the
// same builder.
func streamed(t *testing.T, in entry.Input, b *entry.Builder) *report.Report {
	t.Helper()
	for _, ti := range in.Targets {
		b.Prepare(ti)
	}
	for i, ti := range in.Targets {
		left := ti
		left.Results, left.Split = nil, nil
		for j, r := range ti.Results {
			one := entry.TargetInput{Name: ti.Name, Rules: ti.Rules, Results: []dryrun.Result{r}}
			if !b.Take(one, j) {
				t.Fatalf("%s: result %d not taken", ti.Name, j)
			}
			left.Taken++
		}
		for j, sp := range ti.Split {
			one := entry.TargetInput{Name: ti.Name, Rules: ti.Rules, Split: []entry.Split{sp}}
			if !b.Take(one, len(ti.Results)+j) {
				t.Fatalf("%s: split %d not taken", ti.Name, j)
			}
			left.Taken++
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

// TestAReportIsRefusedFromAnotherBuilderThanTheOneTheResultsWentTo: the entries of
// taken results are the taking builder's; another builder says so rather than leave
// them out.
func TestAReportIsRefusedFromAnotherBuilderThanTheOneTheResultsWentTo(t *testing.T) {
	t.Parallel()
	in := entrytest.SampleInput(t)
	in.Targets[0].Results, in.Targets[0].Taken = nil, 3
	_, err := entry.Build(in, entry.NewBuilder(entry.Options{}, scrub.New()))
	if err == nil || !strings.Contains(err.Error(), "target shop: 3 of its objects were taken") || !strings.Contains(err.Error(), "the builder the preview fed") {
		t.Fatalf("got %v", err)
	}
}
