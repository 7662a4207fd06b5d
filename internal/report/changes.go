package report

// FieldChange is one field a modification changes, as the diff shows it (masked and
// scrubbed): its path, and its value before and after. Op is "add" (no value
// before), "remove" (none after) or "change".
type FieldChange struct {
	Path   string `json:"path"`
	Op     string `json:"op"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// Field change operations.
const (
	OpAdd    = "add"
	OpRemove = "remove"
	OpChange = "change"
)
