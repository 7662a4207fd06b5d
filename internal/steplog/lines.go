package steplog

import (
	"bytes"
	"io"
	"sync"
)

// LineWriter writes each line written through it as inert says, whole: a line is held
// until its line break (or Flush) so that a sequence a CI agent would read as a
// command cannot be split across two writes and pass unseen. It is safe for
// concurrent use. The Azure Pipelines agent is one such reader (azure.Inert).
type LineWriter struct {
	mu    sync.Mutex
	out   io.Writer
	inert func(line string) string
	held  []byte
}

// NewLineWriter returns a LineWriter writing to out.
func NewLineWriter(out io.Writer, inert func(line string) string) *LineWriter {
	return &LineWriter{out: out, inert: inert}
}

// Write writes the complete lines of what it holds and p, and holds the rest. It
// returns len(p) once they are written.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, p...)
	end := bytes.LastIndexAny(w.held, "\r\n")
	if end < 0 {
		return len(p), nil
	}
	lines := string(w.held[:end+1])
	w.held = append(w.held[:0], w.held[end+1:]...)
	if _, err := io.WriteString(w.out, w.inert(lines)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the line that is held, without a line break of its own.
func (w *LineWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) == 0 {
		return nil
	}
	line := string(w.held)
	w.held = w.held[:0]
	_, err := io.WriteString(w.out, w.inert(line))
	return err
}
