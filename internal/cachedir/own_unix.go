//go:build unix

package cachedir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether the user running drift owns the file.
func ownedByMe(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// openNoFollow opens path for reading, failing when it is a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// isLoop reports whether err is what opening a symbolic link without following it
// gives.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
