package render

import (
	"strings"
	"testing"
	"time"
)

// TestLimitSettingsAreSizesWithAFloor: the runner sets the limits in the units it
// knows, and a limit too small to start a worker is refused before anything runs.
func TestLimitSettingsAreSizesWithAFloor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flags   LimitSettings
		memory  int64
		output  int64
		wantErr string
	}{
		{name: "defaults", flags: LimitSettings{Timeout: time.Minute, Memory: "1Gi", Output: "64Mi", Objects: 1}, memory: 1 << 30, output: 64 << 20},
		{name: "bytes", flags: LimitSettings{Timeout: time.Minute, Memory: "536870912", Output: "1000", Objects: 1}, memory: 512 << 20, output: 1000},
		{name: "memory under the floor", flags: LimitSettings{Timeout: time.Minute, Memory: "64Mi", Output: "1Mi", Objects: 1}, wantErr: "--render-memory must be at least 256Mi"},
		{name: "not a size", flags: LimitSettings{Timeout: time.Minute, Memory: "lots", Output: "1Mi", Objects: 1}, wantErr: `--render-memory "lots" is not a size`},
		{name: "no objects", flags: LimitSettings{Timeout: time.Minute, Memory: "1Gi", Output: "1Mi", Objects: 0}, wantErr: "--render-max-objects must be at least 1"},
		{name: "no time", flags: LimitSettings{Memory: "1Gi", Output: "1Mi", Objects: 1}, wantErr: "--render-timeout must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := ParseLimits(tc.flags)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || l.MemoryBytes != tc.memory || l.OutputBytes != tc.output {
				t.Errorf("limits = %+v, %v; want memory %d, output %d", l, err, tc.memory, tc.output)
			}
		})
	}
}
