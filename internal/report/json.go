package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes the drift.report/v1 JSON document.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// Read reads a JSON report drift wrote.
func Read(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a drift JSON report: %w", err)
	}
	if rep.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("not a drift JSON report of schema %s (schemaVersion %q)", SchemaVersion, rep.SchemaVersion)
	}
	return &rep, nil
}
