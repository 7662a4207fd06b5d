package plan

import (
	"fmt"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/render"
)

// EphemeralCRDs reads the CustomResourceDefinitions drift.yaml's ephemeral.crds
// names, from the base when there is one (the setting is the trusted side's), else
// from the previewed ref: the clusters have them, the repository does not deploy
// them, and ephemeral servers need them to check their custom resources.
func (p *Plan) EphemeralCRDs() ([]render.Object, error) {
	if p.Config == nil || p.Config.Use == nil || p.Config.Use.Ephemeral == nil || len(p.Config.Use.Ephemeral.CRDs) == 0 {
		return nil, nil
	}
	snap := p.Head
	if p.Base != nil {
		snap = p.Base
	}
	res, err := render.Plain(snap.FS, render.Options{Paths: p.Config.Use.Ephemeral.CRDs})
	if err != nil {
		return nil, fmt.Errorf("%s: ephemeral.crds in %s: %w", config.FileName, snap.Describe(), err)
	}
	if len(res.Failures) > 0 {
		return nil, fmt.Errorf("%s: ephemeral.crds in %s: %s", config.FileName, snap.Describe(), res.Failures[0].Error())
	}
	for _, o := range res.Objects {
		if id := o.ID(); id.Group != "apiextensions.k8s.io" || id.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s: ephemeral.crds: %s is a %s, not a CustomResourceDefinition: list only CRD files there", config.FileName, o.Where(), id.Kind)
		}
	}
	return res.Objects, nil
}
