package dryrun

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/drift-gitops/drift/internal/reason"
)

// byteFields are the fields of core objects whose values are bytes, written in JSON
// as base64: a Secret's data and a ConfigMap's binaryData, with what the message
// suggests instead.
var byteFields = map[string]struct{ field, instead string }{
	"Secret":    {"data", "or move it to stringData as plain text"},
	"ConfigMap": {"binaryData", "or move it to data as text"},
}

// notBase64 checks the byte fields of a Secret or ConfigMap before anything is sent:
// the API server decodes them as encoding/json decodes []byte (standard base64 with
// padding; line breaks are skipped), and answers a value that does not decode with a
// 500 ("failed to convert new object") to a server-side apply, which would read as
// the server's fault. The message names the keys, never the values.
func notBase64(r *Result) *Message {
	if r.ID.Group != "" {
		return nil
	}
	f, ok := byteFields[r.ID.Kind]
	if !ok {
		return nil
	}
	if !r.Object.Mentions(f.field) {
		return nil
	}
	values, _ := r.Object.Get().Object[f.field].(map[string]any)
	var bad []string
	for k, v := range values {
		s, ok := v.(string) // another type is the server's to refuse, by its type
		if !ok {
			continue
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			bad = append(bad, f.field+"."+k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	verb := "is"
	if len(bad) > 1 {
		verb = "are"
	}
	return &Message{Reason: reason.Invalid, Message: fmt.Sprintf(
		"%s %s not valid base64: the values of a %s's %s must be base64 (standard encoding, padded with =), so the API server cannot read this object and applying it will fail. It was not sent: encode the value (base64 -w0), %s",
		strings.Join(bad, ", "), verb, r.ID.Kind, f.field, f.instead)}
}
