package report

// hints say in one line what to do about an error, by reason. The message itself says
// what happened; the hint is what a reader scanning the report acts on.
var hints = map[string]string{
	"malformed":             "fix the YAML at the named file and document",
	"invalid":               "fix the object: the real apply would be refused the same way",
	"duplicate":             "define the object once",
	"too-large":             "split the document; the API server refuses objects over 3 MiB",
	"refused":               "vendor or pre-render it: drift never runs code from the repository or fetches anything",
	"render-failed":         "fix the kustomization or chart named; `kustomize build` or `helm template` show the same error",
	"unknown-kind":          "install the CRD first, or fix apiVersion",
	"not-found":             "create what is missing (often the namespace) or fix the reference",
	"forbidden":             "grant get and patch on the resource to the credentials drift uses",
	"namespace-terminating": "the namespace is being deleted: wait until it is gone, then apply",
	"admission-denied":      "an admission plugin refuses the object: create what it names or change the object",
	"conflict":              "another field manager owns these fields: take them over with --force-conflicts, or stop setting them",
	"immutable":             "the object must be deleted and recreated: the apply will fail as it is",
	"webhook-unavailable":   "the admission webhook's service is down or slow: check its pods, then run drift again",
	"webhook-denied":        "an admission policy refuses the object: change the object or the policy",
	"dry-run-unsupported":   "ask the webhook's owner to declare sideEffects: None or NoneOnDryRun",
	"changed-during-diff":   "something keeps changing the object: run drift again",
	"timeout":               "the API server was too slow: raise --request-timeout or run again",
	"unavailable":           "the API server could not be reached: check the cluster and run again",
	"not-checked":           "the run deadline ran out: raise --timeout",
}

// hint returns the one-line hint for an error reason ("" when there is none).
func hint(reason string) string { return hints[reason] }
