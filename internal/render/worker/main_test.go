package worker

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as a render worker: Pool re-executes the
// running binary, which is this one under go test.
func TestMain(m *testing.M) {
	Serve()
	os.Exit(m.Run())
}
