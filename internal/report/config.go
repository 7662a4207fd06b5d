package report

import "fmt"

// DefaultContext is the diffs' lines of context by default, as diff -u.
const DefaultContext = 3

// ConfigChange says that the previewed ref edits drift.yaml on a pull request, and
// what of that edit the run did not use because only the base may say it.
type ConfigChange struct {
	// File is the configuration file's path in the repository.
	File string `json:"file"`
	// TrustedFrom is the ref the trusted part was read from (the base).
	TrustedFrom string `json:"trustedFrom"`
	// NotApplied names what the change's file says that the run did not use.
	NotApplied []string `json:"notApplied,omitempty"`
	// Diff is the file's unified diff, base to head.
	Diff string `json:"diff"`
}

// Lead is the first sentence of the report's paragraph on the configuration, each
// name through quote.
func (c *ConfigChange) Lead(quote func(string) string) string {
	s := fmt.Sprintf("This change edits %s. What decides how objects are checked (rules, clusters, field managers, apply modes) is read from the base, %s",
		quote(c.File), quote(c.TrustedFrom))
	if len(c.NotApplied) == 0 {
		return s + "; the change's edits are all used."
	}
	return s + "; not used from the change:"
}
