package render

import (
	"bytes"
	"io/fs"
)

// overlayFS is a snapshot's files with some of them replaced (Spec.Overlay).
type overlayFS struct {
	fs.FS
	files map[string]string
}

func (d overlayFS) Open(name string) (fs.File, error) {
	plain, ok := d.files[name]
	if !ok {
		return d.FS.Open(name)
	}
	info, err := fs.Stat(d.FS, name)
	if err != nil {
		return nil, err
	}
	return &overlayFile{Reader: bytes.NewReader([]byte(plain)), info: overlayInfo{FileInfo: info, size: int64(len(plain))}}, nil
}

func (d overlayFS) ReadFile(name string) ([]byte, error) {
	if plain, ok := d.files[name]; ok {
		return []byte(plain), nil
	}
	return fs.ReadFile(d.FS, name)
}

func (d overlayFS) Stat(name string) (fs.FileInfo, error) {
	info, err := fs.Stat(d.FS, name)
	if plain, ok := d.files[name]; ok && err == nil {
		return overlayInfo{FileInfo: info, size: int64(len(plain))}, nil
	}
	return info, err
}

func (d overlayFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.FS, name) }

type overlayFile struct {
	*bytes.Reader
	info overlayInfo
}

func (f *overlayFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *overlayFile) Close() error               { return nil }

// overlayInfo is the replaced file's information with the new size.
type overlayInfo struct {
	fs.FileInfo
	size int64
}

func (i overlayInfo) Size() int64 { return i.size }
