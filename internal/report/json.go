package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the drift.report/v1 JSON document.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
