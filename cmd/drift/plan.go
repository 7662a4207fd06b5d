package main

import (
	"context"
	"fmt"

	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// planned is what a run previews: the snapshots, drift.yaml as the run reads it, the
// targets (selected by --target and by --base) and the render cache.
type planned struct {
	head, base *source.Snapshot
	cfg        *plan.Config
	targets    []plan.Target
	cache      *render.Cache
}

// plan opens the repository, --ref and --base, and plans the targets.
func (o *diffOptions) plan(ctx context.Context) (*planned, error) {
	repo, err := source.Open(o.Repo)
	if err != nil {
		return nil, err
	}
	if o.detect && o.Ref == "" {
		o.Ref = repo.DefaultBranch()
	}
	p := &planned{}
	if p.head, err = repo.Snapshot(o.Ref); err != nil {
		return nil, err
	}
	if o.Base != "" {
		if p.base, err = repo.Snapshot(o.Base); err != nil {
			return nil, fmt.Errorf("--base: %w", err)
		}
	}
	paths, err := o.repoPaths(repo)
	if err != nil {
		return nil, err
	}
	if err := p.head.CheckPaths(paths); err != nil {
		return nil, err
	}
	if p.cfg, err = plan.LoadConfig(repo, p.head, p.base, plan.ConfigSource{File: o.Config, From: o.ConfigFrom, BaseRef: o.Base, Warnf: o.warnf}); err != nil {
		return nil, err
	}
	if len(o.Paths) == 0 {
		paths = nil // drift.yaml's targets, or the directory drift runs in
	}
	p.targets = plan.Targets(p.cfg, repo.Dir, paths, o.overrides())
	if err := plan.SelectNamed(p.targets, o.Targets); err != nil {
		return nil, err
	}
	if p.cache, err = o.renderCache(ctx, repo); err != nil {
		return nil, err
	}
	if p.base != nil {
		if err := plan.SelectChanged(p.targets, p.head, p.base, p.cfg.Base, p.cache); err != nil {
			return nil, err
		}
	}
	return p, nil
}
