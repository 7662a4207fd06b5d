package dryrun

// kubectl apply, client-side: the three-way patch from the last-applied-configuration
// annotation, as kubectl-client-side-apply (kubectl's own code computes the patch).
var kubectlProfile = &Profile{
	Name:     "kubectl",
	Method:   ClientSide,
	Manager:  ClientSideFieldManager,
	Managers: []string{ClientSideFieldManager, "before-first-apply"},
	Doc:      "kubectl apply (client-side, the three-way patch from last-applied-configuration)",
}

// kubectl apply --server-side: a server-side apply as kubectl, not forced unless
// --force-conflicts says so.
var kubectlServerSideProfile = &Profile{
	Name:     "kubectl-server-side",
	Method:   ServerSide,
	Manager:  DefaultFieldManager,
	Managers: []string{DefaultFieldManager},
	// pkg/cmd/apply: saveLastApplyAnnotationIfNecessary, migrateToSSAIfNecessary.
	MigratesCSA:        true,
	LastAppliedManager: "kubectl-last-applied",
	Doc:                "kubectl apply --server-side (field manager kubectl, or fieldManager)",
}

func init() {
	register(kubectlProfile)
	register(kubectlServerSideProfile)
}
