package write_test

import (
	"testing"

	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/scrub"
)

// build builds in's report as a run that streams nothing: one builder over a new
// scrubber.
func build(t *testing.T, in entry.Input, opts entry.Options) *report.Report {
	t.Helper()
	rep, err := entry.Build(in, entry.NewBuilder(opts, scrub.New()))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
