//go:build !unix

package ephemeral

import (
	"errors"
	"io/fs"
)

// The ephemeral server needs process groups and flock to hold its promises (nothing
// outlives drift, leftovers are removed): elsewhere it does not start.

var errNoReaper = errors.New("the ephemeral server needs Linux or macOS")

func guard(string, ...string) ([]string, error) { return nil, errNoReaper }

func abort(string) {}

func reap(int, string, []string) int { return 2 }

func lock(string) (func(), error) { return nil, errNoReaper }

func abandoned(string) (func(), bool) { return nil, false }

func ownedByUs(fs.FileInfo) bool { return false }
