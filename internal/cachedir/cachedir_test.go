package cachedir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DRIFT_CACHE_DIR": "/d", "XDG_CACHE_HOME": "/x"}, "/d/charts"},
		{map[string]string{"XDG_CACHE_HOME": "/x"}, "/x/drift/charts"},
		{nil, filepath.Join(home, ".cache", "drift", "charts")},
	} {
		if got := Path(func(k string) string { return c.env[k] }, "charts"); got != c.want {
			t.Errorf("%v: %s, want %s", c.env, got, c.want)
		}
	}
}
