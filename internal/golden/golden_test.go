package golden

import "testing"

func TestDiffShowsOnlyTheLinesThatDiffer(t *testing.T) {
	t.Parallel()
	got := Diff("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n")
	want := "@ line 2\n-b\n@ line 3\n+B\n@ line 5\n+e\n"
	if got != want {
		t.Fatalf("Diff =\n%s\nwant\n%s", got, want)
	}
}
