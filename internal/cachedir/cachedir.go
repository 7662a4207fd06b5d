// Package cachedir says where drift keeps what it downloads or builds once: charts,
// the ephemeral server's binaries.
package cachedir

import (
	"os"
	"path/filepath"
)

// Path is elem under drift's cache directory: $DRIFT_CACHE_DIR, else
// $XDG_CACHE_HOME/drift, else ~/.cache/drift.
func Path(getenv func(string) string, elem ...string) string {
	base := getenv("DRIFT_CACHE_DIR")
	if base == "" {
		if xdg := getenv("XDG_CACHE_HOME"); xdg != "" {
			base = filepath.Join(xdg, "drift")
		} else if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".cache", "drift")
		}
	}
	return filepath.Join(append([]string{base}, elem...)...)
}
