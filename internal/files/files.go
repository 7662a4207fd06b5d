// Package files is where drift's commands write the files they are asked for (the
// report's --out, --html and --json-report copies, the comment file, the job
// summary, step outputs and dotenv reports) and read the reports drift report merge
// merges: an FS, the process's own (OS) unless a program that calls drift's actions
// gives another.
package files

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// FS is a file system drift writes its outputs to and reads reports from.
type FS interface {
	// Create creates the file name, empty, and the directories above it.
	Create(name string) (io.WriteCloser, error)
	// Append opens the file name to write at its end, creating it.
	Append(name string) (io.WriteCloser, error)
	// Open opens the file name to read.
	Open(name string) (io.ReadCloser, error)
}

// OS is the process's file system.
type OS struct{}

// Create creates name, and its directory, with os.Create.
func (OS) Create(name string) (io.WriteCloser, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	return os.Create(name)
}

// Append opens name for appending, creating it (0644).
func (OS) Append(name string) (io.WriteCloser, error) {
	return os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
}

// Open opens name with os.Open.
func (OS) Open(name string) (io.ReadCloser, error) { return os.Open(name) }

// Or is fs, or OS when fs is nil.
func Or(fs FS) FS {
	if fs == nil {
		return OS{}
	}
	return fs
}

// Write creates name in fs and writes data to it.
func Write(fs FS, name string, data []byte) error {
	return write(fs.Create, name, data)
}

// AppendTo appends data to name in fs.
func AppendTo(fs FS, name string, data []byte) error {
	return write(fs.Append, name, data)
}

func write(open func(string) (io.WriteCloser, error), name string, data []byte) error {
	f, err := open(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, bytes.NewReader(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
