package ephemeral

import (
	"errors"
	"fmt"
	"testing"
)

func TestRedactedErrorsKeepNoCredentials(t *testing.T) {
	inner := fmt.Errorf("unable fetch envtest.tar.gz (https://bot:s3cret@mirror.example/a.tar.gz?X-Amz-Signature=abc123) -- got status %q; index at http://mirror.example/i.yaml: %w", "403", errNotInIndex)
	err := redactedError{inner}
	want := `unable fetch envtest.tar.gz (https://mirror.example/a.tar.gz) -- got status "403"; index at http://mirror.example/i.yaml: not in the envtest release index`
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	if !errors.Is(err, errNotInIndex) {
		t.Error("the redacted error lost what it wraps")
	}
}
