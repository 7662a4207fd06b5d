package fluxop

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	sprig "github.com/go-task/slim-sprig/v3"
	"github.com/gosimple/slug"
	"github.com/gosimple/unidecode"
	"sigs.k8s.io/yaml"
)

// maxRenderBytes bounds what one execution of a template may write.
const maxRenderBytes = 16 << 20

// newTemplate parses a ResourceSet template as the operator does: << >>
// delimiters, slim-sprig's hermetic functions, slugify, inputs (the input set),
// toYaml and mustToYaml, and an error for a missing map key.
func newTemplate(text string, inputSet map[string]any) (*template.Template, error) {
	return template.New("resourceset").
		Delims("<<", ">>").
		Funcs(sprig.HermeticTxtFuncMap()).
		Funcs(template.FuncMap{"slugify": slugify}).
		Funcs(template.FuncMap{"inputs": func() any { return inputSet }}).
		Funcs(template.FuncMap{"toYaml": toYaml, "mustToYaml": mustToYaml}).
		Option("missingkey=error").
		Parse(text)
}

// execute parses and runs a template (what names it in errors) for one input
// set, its output bounded by maxRenderBytes and stopped when ctx is done.
func execute(ctx context.Context, what, text string, inputSet map[string]any) (string, error) {
	tp, err := newTemplate(text, inputSet)
	if err != nil {
		return "", fmt.Errorf("failed to parse %s: %w", what, err)
	}
	w := &boundedWriter{ctx: ctx}
	if err := tp.Execute(w, nil); err != nil {
		return "", fmt.Errorf("failed to execute %s: %w", what, err)
	}
	return w.b.String(), nil
}

// boundedWriter collects a template's output, refusing to grow past
// maxRenderBytes or to go on once its context is done.
type boundedWriter struct {
	ctx context.Context
	b   strings.Builder
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	if w.b.Len()+len(p) > maxRenderBytes {
		return 0, fmt.Errorf("output longer than %d bytes", maxRenderBytes)
	}
	return w.b.Write(p)
}

// toYaml encodes a value as YAML, "" when it cannot.
func toYaml(v any) string {
	if s, err := mustToYaml(v); err == nil {
		return s
	}
	return ""
}

// mustToYaml encodes a value as YAML, or fails.
func mustToYaml(v any) (string, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// slugMaxLength is where slugify cuts. The operator's slugify is gosimple/slug's
// Make with MaxLength 63 and smart truncation, set as that package's globals.
// drift's internal/appset sets those globals too, so slugify does the same steps
// here without reading them: English substitutions (& and @), transliteration to
// ASCII, lower case, runs of other characters to one '-', '-' and '_' trimmed
// from the ends, then cut at the last '-' at or before 63 bytes (at 63 when there
// is none).
const slugMaxLength = 63

var (
	slugEnglish   = map[rune]string{'&': "and", '@': "at"}
	slugUnallowed = regexp.MustCompile("[^a-zA-Z0-9-_]")
	slugDashes    = regexp.MustCompile("-+")
)

// slugify makes a Kubernetes label value of a string, as the operator's does.
func slugify(s string) string {
	out := slug.SubstituteRune(strings.TrimSpace(s), slugEnglish)
	out = strings.ToLower(unidecode.Unidecode(out))
	out = slugUnallowed.ReplaceAllString(out, "-")
	out = slugDashes.ReplaceAllString(out, "-")
	out = strings.Trim(out, "-_")
	if len(out) <= slugMaxLength {
		return out
	}
	for i := slugMaxLength; i >= 0; i-- {
		if out[i] == '-' {
			return out[:i]
		}
	}
	return out[:slugMaxLength]
}
