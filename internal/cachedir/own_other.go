//go:build !unix

package cachedir

import (
	"fmt"
	"io/fs"
	"os"
)

// ownedByMe reports whether the user running drift owns the file: on systems without
// Unix owners, the directory's access control list decides, and every file counts.
func ownedByMe(fs.FileInfo) bool { return true }

// openNoFollow opens path for reading, failing when it is a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, errLoop
	}
	return os.Open(path)
}

var errLoop = fmt.Errorf("a symbolic link")

// isLoop reports whether err is openNoFollow's for a symbolic link.
func isLoop(err error) bool { return err == errLoop }
