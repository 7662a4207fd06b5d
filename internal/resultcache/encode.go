package resultcache

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// hider writes an answer as JSON in one pass, every secret string replaced by its
// placeholder as it goes (Store.hide's rules), so that storing an answer copies it
// once, into the bytes stored. ok turns false, and stays false, when a secret cannot
// be restored later (no source holds it), hides in a number or a key, or a string
// looks like a placeholder: then nothing is stored.
type hider struct {
	s   *Store
	buf []byte
	// sources are what the request carried and read, decoded once a secret asks.
	sources func() []any
	hashes  map[string]string
	ok      bool
}

// value writes v; all says every string and number under it is secret (a Secret's
// data).
func (h *hider) value(v any, all bool) {
	if !h.ok {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		h.buf = append(h.buf, '{')
		for i, k := range keys {
			if h.s.secret(k) {
				h.ok = false // a key that is a secret: keep nothing
				return
			}
			if i > 0 {
				h.buf = append(h.buf, ',')
			}
			h.buf = appendString(h.buf, k)
			h.buf = append(h.buf, ':')
			h.value(x[k], all)
		}
		h.buf = append(h.buf, '}')
	case []any:
		h.buf = append(h.buf, '[')
		for i, e := range x {
			if i > 0 {
				h.buf = append(h.buf, ',')
			}
			h.value(e, all)
		}
		h.buf = append(h.buf, ']')
	case string:
		h.string(x, all)
	case nil:
		h.buf = append(h.buf, "null"...)
	case bool:
		h.buf = strconv.AppendBool(h.buf, x)
	case int64:
		h.number(strconv.AppendInt(nil, x, 10), all)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			h.ok = false // not JSON
			return
		}
		n := strconv.AppendFloat(nil, x, 'g', -1, 64)
		if !strings.ContainsAny(string(n), ".eE") {
			n = append(n, ".0"...) // read back as a float64, as it was
		}
		h.number(n, all)
	default:
		// No other type is decoded from JSON; anything else as encoding/json writes it.
		b, err := json.Marshal(x)
		if err != nil {
			h.ok = false
			return
		}
		h.number(b, all)
	}
}

// string writes s, or its placeholder when it is secret.
func (h *hider) string(s string, all bool) {
	if strings.HasPrefix(s, placeholder) {
		h.ok = false // a string that looks like ours: keep nothing
		return
	}
	if !all && !h.s.secret(s) {
		h.buf = appendString(h.buf, s)
		return
	}
	if h.hashes == nil {
		h.hashes = h.s.stringsByHash(h.sources()...)
	}
	sum := h.s.secretSum(s)
	if _, ok := h.hashes[sum]; !ok {
		h.ok = false
		return
	}
	h.buf = appendString(h.buf, placeholder+sum)
}

// number writes a number's JSON, unless it is secret: a number cannot hold a
// placeholder.
func (h *hider) number(n []byte, all bool) {
	if all || h.s.secret(string(n)) {
		h.ok = false
		return
	}
	h.buf = append(h.buf, n...)
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 as U+FFFD (as encoding/json writes it).
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
