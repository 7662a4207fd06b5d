package publish

import (
	"io/fs"
	"testing"
	"testing/fstest"
	"time"
)

// countingFS counts the files opened, and says huge.yaml is larger than the render
// reads.
type countingFS struct {
	fstest.MapFS
	opened map[string]int
}

func (c countingFS) Open(name string) (fs.File, error) {
	c.opened[name]++
	return c.MapFS.Open(name)
}

func (c countingFS) ReadFile(name string) ([]byte, error) {
	c.opened[name]++
	return c.MapFS.ReadFile(name)
}

func (c countingFS) Stat(name string) (fs.FileInfo, error) {
	if name == "huge.yaml" {
		return hugeInfo{}, nil
	}
	return fs.Stat(c.MapFS, name)
}

type hugeInfo struct{}

func (hugeInfo) Name() string       { return "huge.yaml" }
func (hugeInfo) Size() int64        { return maxLinesFileBytes + 1 }
func (hugeInfo) Mode() fs.FileMode  { return 0o644 }
func (hugeInfo) ModTime() time.Time { return time.Time{} }
func (hugeInfo) IsDir() bool        { return false }
func (hugeInfo) Sys() any           { return nil }

// TestDocumentLines: each document's first line, separators inside block scalars
// left alone; each file read once; a file larger than the render reads is not read.
func TestDocumentLines(t *testing.T) {
	fsys := countingFS{MapFS: fstest.MapFS{
		"a.yaml":    {Data: []byte("a: 1\n---\nb: 2\n--- # third\nc: 3\n")},
		"lead.yaml": {Data: []byte("---\na: 1\n---\nb: 2\n")},
		"text.yaml": {Data: []byte("a: |\n  ---x\n---\nb: 2\n")},
		"huge.yaml": {Data: []byte("a: 1\n---\nb: 2\n")},
	}, opened: map[string]int{}}
	line := DocumentLines(fsys)
	for _, c := range []struct {
		file      string
		doc, want int
	}{
		{"a.yaml", 1, 1}, {"a.yaml", 2, 3}, {"a.yaml", 3, 5}, {"a.yaml", 4, 0},
		{"lead.yaml", 1, 2}, {"lead.yaml", 2, 4},
		{"text.yaml", 2, 4},
		{"missing.yaml", 1, 0}, {"a.yaml", 0, 0},
		{"huge.yaml", 2, 0},
	} {
		if got := line(c.file, c.doc); got != c.want {
			t.Errorf("%s document %d: line %d, want %d", c.file, c.doc, got, c.want)
		}
	}
	if fsys.opened["a.yaml"] != 1 || fsys.opened["huge.yaml"] != 0 {
		t.Errorf("files opened: %v; want a.yaml once and huge.yaml never", fsys.opened)
	}
}
