// Package steplog is what drift writes to a GitHub Actions step's log. The runner
// reads every line of a step's stdout and stderr as a possible workflow command
// (actions/runner, src/Runner.Common/ActionCommand.cs): a line is one when, after
// leading white space is trimmed, it starts with "::" (TryParseV2), or when "##[" is
// anywhere in it (TryParse). Lines end at "\n", "\r" or "\r\n" (.NET's
// StreamReader.ReadLine). A Writer neutralises every line passing through it, so that
// nothing a repository or a cluster puts in drift's output (an error message, a diff
// line of a multi-line value) can add a mask, set an output, open a group or forge an
// annotation; drift's own commands take the separate path of WriteCommand.
package steplog

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// zwsp is U+200B ZERO WIDTH SPACE, the byte sequence Writer inserts. It is not white
// space to .NET (char.IsWhiteSpace, which string.TrimStart uses), so a line whose
// "::" it precedes no longer starts with "::"; between the two '#' of "##[" it breaks
// the prefix apart. The runner also compares culture-sensitively (String.StartsWith
// and IndexOf with a string under ICU), where a zero-width space may be ignored, but
// it then cuts the command's name out by position: the inserted character shifts the
// name onto ':' or '[', which no command is named, so the line is still not a
// command. It is invisible in the log, which stays readable and copyable, unlike an
// escape such as "%3A"; ::stop-commands:: is not used because the runner reads
// stdout and stderr concurrently, so a stop written to one does not order against a
// line written to the other.
const zwsp = "\u200b"

// Writer neutralises the lines written through it (see the package comment). It is
// safe for concurrent use; Flush writes what it holds back at the end of the output.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	// head: everything since the line began is white space (to .NET), so a "::" here
	// would start a command.
	head bool
	// mid: the line has begun (bytes written or held), so a command needs a line
	// break before it.
	mid bool
	// held are bytes not written yet because the next ones decide them: an incomplete
	// UTF-8 sequence or one ':' at the head of a line, one or two '#' in its body.
	held []byte
}

// NewWriter returns a Writer writing the neutralised lines to out.
func NewWriter(out io.Writer) *Writer {
	return &Writer{out: out, head: true}
}

// Write neutralises p, holding back at most three bytes that the next write decides.
// It returns len(p) once the neutralised bytes are written.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
		w.held = nil
	}
	out := make([]byte, 0, len(data)+8)
	for i := 0; i < len(data); {
		c := data[i]
		if c == '\n' || c == '\r' {
			out = append(out, c)
			w.head, w.mid = true, false
			i++
			continue
		}
		w.mid = true
		if w.head {
			if c == ':' {
				if i+1 == len(data) {
					w.held = append(w.held, data[i:]...)
					break
				}
				if data[i+1] == ':' {
					out = append(out, zwsp...)
				}
				w.head = false
				continue
			}
			if c >= utf8.RuneSelf && !utf8.FullRune(data[i:]) {
				w.held = append(w.held, data[i:]...)
				break
			}
			r, size := utf8.DecodeRune(data[i:])
			if isDotNetSpace(r) {
				out = append(out, data[i:i+size]...)
				i += size
				continue
			}
			w.head = false
			continue
		}
		if c == '#' {
			rest := data[i:]
			switch {
			case len(rest) == 1, len(rest) == 2 && rest[1] == '#':
				// "#" or "##" at the end: the next write says whether "##[" follows.
				w.held = append(w.held, rest...)
				i = len(data)
				continue
			case len(rest) >= 3 && rest[1] == '#' && rest[2] == '[':
				out = append(out, '#')
				out = append(out, zwsp...)
				out = append(out, '#', '[')
				i += 3
				continue
			}
		}
		out = append(out, c)
		i++
	}
	if _, err := w.out.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the bytes held back: the output ends, and no byte can follow them.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.held) == 0 {
		return nil
	}
	held := w.held
	w.held = nil
	_, err := w.out.Write(held)
	return err
}

// WriteCommand writes one of drift's own workflow commands as it is, on a line of its
// own: the one path by which a command reaches the log. Its properties and message
// are escaped as the runner unescapes them (Command.String).
func (w *Writer) WriteCommand(c Command) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushLocked(); err != nil {
		return err
	}
	line := c.String() + "\n"
	if w.mid {
		line = "\n" + line
	}
	w.head, w.mid = true, false
	_, err := io.WriteString(w.out, line)
	return err
}

// isDotNetSpace reports whether .NET's char.IsWhiteSpace holds for r, which is what
// string.TrimStart() trims: U+0009–U+000D, U+0020, U+0085, U+00A0, U+1680,
// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (U+200B is not among them).
func isDotNetSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r == ' ', r == 0x85, r == 0xa0, r == 0x1680:
		return true
	case r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// Commands is where drift writes its own workflow commands.
type Commands interface {
	WriteCommand(Command) error
}

// CommandsTo returns the command path of w: w's own when w is a Writer (the step
// log's stream), else a path writing each command as a line to w (outside a step,
// where nothing neutralises w).
func CommandsTo(w io.Writer) Commands {
	if sw, ok := w.(*Writer); ok {
		return sw
	}
	return plain{w}
}

type plain struct{ w io.Writer }

func (p plain) WriteCommand(c Command) error {
	_, err := io.WriteString(p.w, c.String()+"\n")
	return err
}

// Command is a workflow command: "::name key=value,key=value::message".
type Command struct {
	// Name is the command (error, warning, notice, group, add-mask, ...).
	Name string
	// Properties are written in this order.
	Properties []Property
	// Message is the command's data.
	Message string
}

// Property is one key=value of a command.
type Property struct{ Key, Value string }

// String is the command's line without its line break, properties and message
// escaped as the runner unescapes them, so that neither can end the command or start
// another line.
func (c Command) String() string {
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(c.Name)
	for i, p := range c.Properties {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(EscapeProperty(p.Value))
	}
	b.WriteString("::")
	b.WriteString(EscapeData(c.Message))
	return b.String()
}

// EscapeData escapes a workflow command's message as the runner reads it.
func EscapeData(s string) string {
	return dataEscaper.Replace(s)
}

// EscapeProperty escapes a workflow command's property value.
func EscapeProperty(s string) string {
	return propertyEscaper.Replace(s)
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)
