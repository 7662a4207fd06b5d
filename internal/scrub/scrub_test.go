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
