package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
)

// memFiles is a files.FS in memory: what a program calling drift's actions may give
// Config.Files to keep a run's files.
type memFiles struct {
	mu    sync.Mutex
	files map[string]*bytes.Buffer
}

type memFile struct {
	*bytes.Buffer
}

func (memFile) Close() error { return nil }

func (m *memFiles) file(name string, truncate bool) *bytes.Buffer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]*bytes.Buffer{}
	}
	if m.files[name] == nil || truncate {
		m.files[name] = &bytes.Buffer{}
	}
	return m.files[name]
}

func (m *memFiles) Create(name string) (io.WriteCloser, error) {
	return memFile{m.file(name, true)}, nil
}

func (m *memFiles) Append(name string) (io.WriteCloser, error) {
	return memFile{m.file(name, false)}, nil
}

func (m *memFiles) Open(name string) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.files[name]
	if b == nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return io.NopCloser(bytes.NewReader(b.Bytes())), nil
}

// TestAProgramKeepsARunsFilesWhereItSays: with Config.Files, every file a run is
// asked to write (the report, its HTML and JSON copies, the comment file, the job
// summary and the step outputs) goes there and none to disk, and drift report merge
// reads its shards from there.
func TestAProgramKeepsARunsFilesWhereItSays(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, "out", name) }
	mem := &memFiles{}
	var out, errOut bytes.Buffer
	cfg := NewConfig(&out, &errOut)
	cfg.Files = mem
	cfg.Getenv = func(k string) string {
		return map[string]string{"DRIFT_CACHE_DIR": filepath.Join(dir, "cache"), "GITHUB_OUTPUT": in("outputs")}[k]
	}
	rep := &report.Report{SchemaVersion: report.SchemaVersion, Complete: true, Commit: "0123456789abcdef0123456789abcdef01234567",
		Targets: []report.Target{{Name: "web", Objects: []report.Object{{ID: report.ID{Version: "v1", Kind: "ConfigMap", Name: "web", Namespace: "default"}, Category: report.Modify, Source: "web.yaml", Diff: "-a\n+b\n"}}}}}
	rep.Settle()
	o := &Run{Repo: dir, Output: "markdown", OutFile: in("report.md"), Report: Report{Color: "never", Unified: 3, HTML: in("report.html")},
		GitHub: GitHub{JSONReport: in("report.json"), CommentFile: in("comment.md"), StepSummary: in("summary.md"), Outputs: true},
		Given:  func(string) bool { return false }}
	err := cfg.Finish(context.Background(), o, rep)
	if exit := Exit(0); !errors.As(err, &exit) || exit != Changes {
		t.Fatalf("Finish: %v (want exit 1)\nstderr:\n%s", err, errOut.String())
	}
	for name, says := range map[string]string{"report.md": "ConfigMap", "report.html": "<html", "report.json": `"schemaVersion"`,
		"comment.md": "drift", "summary.md": "ConfigMap", "outputs": "has-changes=true"} {
		f := mem.files[in(name)]
		if f == nil || !strings.Contains(f.String(), says) {
			t.Errorf("%s: not written to Config.Files, or without %q", name, says)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file went to disk: %v", err)
	}

	// drift report merge reads its shards from the same files: the JSON copy is
	// read and decoded from there (and refused, as a run's report is no shard's).
	var mout, merrOut bytes.Buffer
	mcfg := NewConfig(&mout, &merrOut)
	mcfg.Files, mcfg.Getenv = mem, cfg.Getenv
	_, err = mcfg.Merge(context.Background(), &Diff{Run: Run{Repo: dir, Output: "text", Report: Report{Color: "never", Unified: 3},
		Given: func(string) bool { return false }}}, []string{in("report.json")})
	if err == nil || !strings.Contains(err.Error(), "is not a shard's report") {
		t.Errorf("Merge did not read the report from Config.Files: %v", err)
	}
}
