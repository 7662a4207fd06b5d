package publish

import (
	"github.com/drift-gitops/drift/internal/azure"
	"github.com/drift-gitops/drift/internal/bitbucket"
	"github.com/drift-gitops/drift/internal/gitea"
	"github.com/drift-gitops/drift/internal/publish/forge"
)

// Kinds are the forges drift publishes to beside GitHub and GitLab, each with its
// flags (--gitea-comment, --bitbucket-comment, --azure-comment, ...).
var Kinds = []*forge.Kind{gitea.Kind, bitbucket.Kind, azure.Kind}

// KindOf is the forge of Kinds whose flags are named flag ("gitea"); nil when none.
func KindOf(flag string) *forge.Kind {
	for _, k := range Kinds {
		if k.Flag == flag {
			return k
		}
	}
	return nil
}
