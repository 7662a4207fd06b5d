package report

import "testing"

// A file whose target has errors elsewhere: in a plain target, a file none of whose
// objects failed gives the target nothing else, so it was previewed; in a kustomize
// target it may be a patch of the object that failed, so it was not. A file an
// object failed from is not previewed either way; a skipped target the change
// touches says why.
func TestCoverageOfFilesInTargetsWithErrors(t *testing.T) {
	failed := Object{Category: Error, Source: "app/broken.yaml"}
	ok := Object{Category: Modify, Source: "app/cm.yaml"}
	rep := &Report{
		Targets: []Target{
			{Name: "plain", Renderer: "plain", Objects: []Object{failed, ok}},
			{Name: "kust", Renderer: "kustomize", Objects: []Object{failed, ok}},
			{Name: "other", Skipped: "its source is another repository", NotPreviewed: true},
		},
		Coverage: NewCoverage([]CoverageInput{
			{Path: "app/notes.jsonnet", Readers: []string{"plain"}},
			{Path: "app/patch.yaml", Readers: []string{"kust"}},
			{Path: "app/broken.yaml", Readers: []string{"plain"}},
			{Path: "app/cm.yaml", Readers: []string{"kust"}},
			{Path: "other/x.yaml", Readers: []string{"other"}},
		}),
	}
	resolveCoverage(rep)
	want := map[string]string{
		"app/notes.jsonnet": CoveragePreviewed, "app/patch.yaml": CoverageNotPreviewed, "app/broken.yaml": CoverageNotPreviewed,
		"app/cm.yaml": CoveragePreviewed, "other/x.yaml": CoverageNotPreviewed,
	}
	for _, f := range rep.Coverage.Files {
		if f.Status != want[f.Path] {
			t.Errorf("%s: %s (%s), want %s", f.Path, f.Status, f.Why, want[f.Path])
		}
	}
	if notCovered(rep.Coverage) != 0 {
		t.Error("files read by targets counted as read by nothing")
	}
}
