package app

import (
	"strings"
	"testing"
)

// --color: the flag, then NO_COLOR and FORCE_COLOR, then whether the output is a terminal.
func TestColorFollowsFlagAndEnvironment(t *testing.T) {
	var notTerminal strings.Builder
	for _, c := range []struct {
		flag string
		env  map[string]string
		want bool
	}{
		{"auto", nil, false},
		{"auto", map[string]string{"FORCE_COLOR": "1"}, true},
		{"auto", map[string]string{"FORCE_COLOR": "1", "NO_COLOR": "1"}, false},
		{"auto", map[string]string{"FORCE_COLOR": "0"}, false},
		{"always", map[string]string{"NO_COLOR": "1"}, true},
		{"never", map[string]string{"FORCE_COLOR": "1"}, false},
	} {
		r := Report{Color: c.flag}
		if got := r.color(&notTerminal, func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("--color %s with %v: %v, want %v", c.flag, c.env, got, c.want)
		}
	}
}
