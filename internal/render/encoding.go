package render

import (
	"bytes"
	"errors"

	"golang.org/x/text/encoding/unicode"
)

// decodeText turns a manifest file into UTF-8 as kubectl reads it: cli-runtime reads
// files through unicode.BOMOverride, so a UTF-8 byte-order mark is dropped and UTF-16
// with its mark (little or big endian) is decoded. What kubectl cannot read either
// (UTF-32, or UTF-16 without a mark) is refused whole rather than half-read: parsed
// as UTF-8, such a file would yield its first document and silently lose the others.
func decodeText(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0x00, 0x00}), bytes.HasPrefix(data, []byte{0x00, 0x00, 0xFE, 0xFF}):
		return nil, errors.New("is UTF-32 (it starts with a UTF-32 byte-order mark), which kubectl cannot read either: save it as UTF-8")
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		out, err := unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return nil, errors.New("starts with a UTF-16 byte-order mark but is not valid UTF-16: save it as UTF-8")
		}
		return out, nil
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New("contains NUL bytes: it is UTF-16 or UTF-32 without a byte-order mark, or not text at all; save it as UTF-8")
	}
	return data, nil
}
