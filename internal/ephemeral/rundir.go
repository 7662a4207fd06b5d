package ephemeral

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// An ephemeral server keeps its certificates, etcd's data and its binaries' wrappers
// in a run directory of its own under os.TempDir(). A run directory is locked for as
// long as its server runs; the kernel releases the lock when drift exits in any way,
// SIGKILL included, so the next start can tell what is left behind from what is in use.
const (
	runPrefix     = "drift-ephemeral-"
	stagingPrefix = "." + runPrefix
	lockName      = "lock"
	// stagingGrace is how long a staging directory may be without its lock: the moment
	// between creating it and locking it.
	stagingGrace = time.Minute
)

type runDir struct {
	path string
	// unlock releases the lock; after it, the directory is anyone's to remove.
	unlock func()
}

// newRunDir creates a run directory that is locked from the moment it has its name: it
// is made under a hidden staging name, locked, then renamed. A directory with the run
// prefix whose lock is free (or gone) therefore belongs to no live drift.
func newRunDir() (*runDir, error) {
	tmp := os.TempDir()
	staging, err := os.MkdirTemp(tmp, stagingPrefix)
	if err != nil {
		return nil, fmt.Errorf("failed to create a directory for the ephemeral server in %s: %w; set TMPDIR to a writable directory", tmp, err)
	}
	unlock, err := lock(filepath.Join(staging, lockName))
	if err != nil {
		_ = os.RemoveAll(staging)
		return nil, fmt.Errorf("failed to lock the ephemeral server's directory %s: %w", staging, err)
	}
	final := filepath.Join(tmp, runPrefix+strings.TrimPrefix(filepath.Base(staging), stagingPrefix))
	if err := os.Rename(staging, final); err != nil {
		unlock()
		_ = os.RemoveAll(staging)
		return nil, fmt.Errorf("failed to create the ephemeral server's directory %s: %w", final, err)
	}
	return &runDir{path: final, unlock: unlock}, nil
}

// remove removes the directory, then lets go of its lock, so that no other drift
// removes it while this one still does.
func (d *runDir) remove() error {
	err := os.RemoveAll(d.path)
	d.unlock()
	if err != nil {
		return fmt.Errorf("failed to remove the ephemeral server's directory %s: %w", d.path, err)
	}
	return nil
}

// removeLeftovers removes the run directories in dir of drift processes that are gone
// (killed, or stopped before they could clean up). It never removes a directory whose
// lock is held, one another user owns, or a symbolic link; errors are ignored, since
// what is left is tried again at the next start.
func removeLeftovers(dir string, now time.Time) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		staging := strings.HasPrefix(name, stagingPrefix)
		if !e.IsDir() || !staging && !strings.HasPrefix(name, runPrefix) {
			continue
		}
		path := filepath.Join(dir, name)
		info, err := os.Lstat(path)
		if err != nil || !info.IsDir() || !ownedByUs(info) {
			continue
		}
		if staging && now.Sub(info.ModTime()) < stagingGrace {
			continue
		}
		release, ok := abandoned(filepath.Join(path, lockName))
		if !ok {
			continue
		}
		if err := os.RemoveAll(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		release()
	}
	return errors.Join(errs...)
}
