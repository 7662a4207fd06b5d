package entry

import (
	"testing"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

// build builds in's report with a builder of its own, as a run that streams nothing.
func build(t *testing.T, in Input, opts Options) *report.Report {
	t.Helper()
	rep, err := Build(in, NewBuilder(opts, scrub.New()))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// buildOne is the entry of one result of a target with rules.
func buildOne(t *testing.T, r dryrun.Result, rules config.Rules) report.Object {
	t.Helper()
	rep := build(t, Input{Targets: []TargetInput{{Name: "t", Results: []dryrun.Result{r}, Rules: rules}}}, Options{})
	return rep.Targets[0].Objects[0]
}
