package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// isLiteral reports whether v is a YAML or JSON word found in every manifest.
func isLiteral(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "null":
		return true
	}
	return false
}

// trivialLine reports whether a line of a multi-line value is too common to scrub: too
// short, a literal, or a PEM boundary ("-----BEGIN CERTIFICATE-----"), which says
// what a value is but nothing of it.
func trivialLine(l string) bool {
	return len(l) < MinScrubLength || isLiteral(l) || strings.HasPrefix(l, "-----BEGIN ") || strings.HasPrefix(l, "-----END ")
}

// tokenLike reports whether a line of a value is scrubbed inside YAML too.
func tokenLike(l string) bool {
	return len(l) >= minLineInYAML && !strings.ContainsAny(l, " \t")
}

// escapedForms are v as a JSON or Go string literal without its quotes (with and
// without HTML escaping, Go's \x and \u forms), and JSON-escaped twice (a JSON
// document quoted in a JSON message).
func escapedForms(v string) []string {
	unquote := func(q string) string { return q[1 : len(q)-1] }
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	once := unquote(strings.TrimSuffix(plain.String(), "\n"))
	html, _ := json.Marshal(v)
	twice, _ := json.Marshal(once)
	return []string{once, unquote(string(html)), unquote(string(twice)),
		unquote(strconv.Quote(v)), unquote(strconv.QuoteToASCII(v))}
}

// base64Forms are v in standard and URL base64, padded and not, and the part of the
// encoding that v alone determines when v is encoded inside a longer string (a token
// in the base64 of "x-access-token:TOKEN"), at each of the three alignments.
func base64Forms(v string) []string {
	b := []byte(v)
	out := []string{base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b)}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for a := 0; a < 3; a++ {
			e := enc.EncodeToString(append(make([]byte, a), b...))
			// Character i holds bits 6i..6i+5; keep those made only of v's bits.
			from, to := (8*a+5)/6, 8*(a+len(b))/6
			if a == 0 {
				out = append(out, e)
			}
			if to > from {
				out = append(out, e[from:to])
			}
		}
	}
	return out
}

// numberForms are a number as the API server, Go and JSON print it: 98765432123,
// 9.8765432123e+10, 1e+06, 1000000.
func numberForms(v any) []string {
	var f float64
	switch n := v.(type) {
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		return append(floatForms(float64(n)), strconv.FormatInt(n, 10))
	case uint64:
		return append(floatForms(float64(n)), strconv.FormatUint(n, 10))
	case float32:
		f = float64(n)
	case float64:
		f = n
	case json.Number:
		return append(floatForms(mustFloat(n)), n.String())
	default:
		return nil
	}
	return floatForms(f)
}

func floatForms(f float64) []string {
	out := []string{strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(f, 'e', -1, 64)}
	if b, err := json.Marshal(f); err == nil {
		out = append(out, string(b))
	}
	if f == float64(int64(f)) {
		out = append(out, strconv.FormatInt(int64(f), 10))
	}
	return out
}

func mustFloat(n json.Number) float64 {
	f, _ := n.Float64()
	return f
}
