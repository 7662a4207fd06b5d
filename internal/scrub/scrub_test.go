package scrub

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestValuesInsideTheBase64OfALongerStringAreScrubbed: a token inside the base64 of
// "x-access-token:TOKEN" (a git credential), at each of the three alignments.
func TestValuesInsideTheBase64OfALongerStringAreScrubbed(t *testing.T) {
	t.Parallel()
	const token = "ghs_0123456789abcdefABCDEF0123456789"
	for _, prefix := range []string{"x-access-token:", "bearer ", "user:", "Authorization: Basic "} {
		t.Run(prefix, func(t *testing.T) {
			t.Parallel()
			enc := base64.StdEncoding.EncodeToString([]byte(prefix + token + "@github.com"))
			sc := New()
			sc.AddCredential(token)
			got := sc.Scrub("header: " + enc)
			// Every window of characters that only the token's bits make must be gone;
			// the prefix's and suffix's own characters may stay.
			from, to := len(prefix)*4/3+2, (len(prefix)+len(token))*4/3-2
			for i := from; i+6 <= to; i++ {
				if strings.Contains(got, enc[i:i+6]) {
					t.Fatalf("%q still holds %q of the token's base64 (%q)", got, enc[i:i+6], enc)
				}
			}
		})
	}
}

// TestOverlappingValuesLeaveNoPartWhateverTheOrder: values that overlap in the text
// are scrubbed as one run whatever order they were added in.
func TestOverlappingValuesLeaveNoPartWhateverTheOrder(t *testing.T) {
	t.Parallel()
	text := "a zzabcd1234 b abcd1234zz c"
	var outs []string
	for _, order := range [][]string{{"abcd1234", "zzab", "34zz"}, {"34zz", "zzab", "abcd1234"}} {
		sc := New()
		sc.AddCredential(order...)
		outs = append(outs, sc.Scrub(text))
	}
	if outs[0] != "a *** b *** c" || outs[1] != outs[0] {
		t.Fatalf("got %q and %q", outs[0], outs[1])
	}
}

// TestHoldsIsWhetherScrubChangesText: Holds answers what Scrub would do, without
// writing: every form of a value, a value inside a longer text, a public name, text
// shorter than any needle.
func TestHoldsIsWhetherScrubChangesText(t *testing.T) {
	sc := New()
	if sc.Holds("anything at all") {
		t.Error("an empty scrubber holds a value")
	}
	sc.AddValue("hunter2-s3cret")
	sc.AddValue("multi\nline-secret-value\n")
	sc.AddPublic("shop")
	for _, text := range []string{
		"hunter2-s3cret", "the password is hunter2-s3cret.", "aHVudGVyMi1zM2NyZXQ=", "hunter2%2Ds3cret",
		"line-secret-value", "hunter2", "shop", "", "abc", "nothing to see here", "hunter2-s3cre",
	} {
		if got, want := sc.Holds(text), sc.Scrub(text) != text; got != want {
			t.Errorf("Holds(%q) = %v, Scrub changes it: %v", text, got, want)
		}
	}
}
