package entry

import "github.com/drift-gitops/drift/internal/dryrun"

// Split is one object of a pull request's report that tells the change apart from
// drift already in the cluster.
type Split struct {
	// Head is the head's prediction; its Live is the live object.
	Head dryrun.Result
	// Base is the base's prediction of the same object on the same cluster; nil when
	// the base does not render it.
	Base *dryrun.Result
}
