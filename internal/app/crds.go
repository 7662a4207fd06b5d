package app

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
)

// ephemeralCRDs are the CustomResourceDefinitions loaded into ephemeral servers beside
// the repository's: drift.yaml's ephemeral.crds and --crds-from-context's cluster's.
func (o *Run) ephemeralCRDs(ctx context.Context, m mode, pl *plan.Plan) ([]render.Object, error) {
	if m.cluster != ephemeralCluster {
		if m.crdsFromContext != "" {
			return nil, fmt.Errorf("--crds-from-context loads CRDs into an ephemeral server: use it with --cluster ephemeral")
		}
		return nil, nil
	}
	crds, err := pl.EphemeralCRDs()
	if err != nil || m.crdsFromContext == "" {
		return crds, err
	}
	conn, err := o.connect(ctx, plan.ClusterKey{Context: m.crdsFromContext}, "")
	if err != nil {
		return nil, fmt.Errorf("--crds-from-context %s: %w", m.crdsFromContext, err)
	}
	live, err := ephemeral.CRDsFrom(ctx, conn.Clients, "context "+m.crdsFromContext)
	if err != nil {
		return nil, fmt.Errorf("--crds-from-context %s: %w", m.crdsFromContext, err)
	}
	return append(crds, live...), nil
}
