package discover

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// clusterRoots are the cluster roots of a fleet among the objects written in the
// repository's files: the directory each flux-system Kustomization (Flux's
// bootstrap), FluxInstance (Flux Operator) or root Application of Argo CD (one
// written in the repository, deploying to the cluster Argo CD runs in, whose path
// holds Argo CD or Flux objects: an app of apps) syncs, or the directory it is
// written in when that is above the one it syncs, and the directory that holds a
// flux-system directory of Flux's bootstrap (its gotk-components.yaml or
// gotk-sync.yaml, among files); none unless there are two or more, side by side (a
// repository with one cluster is that cluster). files are the files searched, true
// for those that name an Argo CD or Flux API group.
func clusterRoots(queue []found, files map[string]bool) []string {
	seen := map[string]bool{}
	for _, f := range sortedKeys(files) {
		if dir := path.Dir(f); path.Base(dir) == "flux-system" && (path.Base(f) == "gotk-components.yaml" || path.Base(f) == "gotk-sync.yaml") {
			if root := path.Dir(dir); root != "." {
				seen[root] = true
			}
		}
	}
	for _, f := range queue {
		obj := f.obj.Get()
		group := strings.SplitN(obj.GetAPIVersion(), "/", 2)[0]
		spec, _ := obj.Object["spec"].(map[string]any)
		var synced string
		switch {
		case obj.GetKind() == KindKustomization && group == "kustomize.toolkit.fluxcd.io" && obj.GetName() == "flux-system":
			synced, _ = spec["path"].(string)
		case obj.GetKind() == KindFluxInstance && group == "fluxcd.controlplane.io":
			sync, _ := spec["sync"].(map[string]any)
			synced, _ = sync["path"].(string)
		case obj.GetKind() == KindApplication && group == "argoproj.io":
			synced = rootApplicationPath(f, files)
		default:
			continue
		}
		if synced == "" || f.parent != "" || f.obj.Source == "" {
			continue
		}
		root := repoPath(synced)
		if dir := path.Dir(f.obj.Source); !within(dir, root) && within(root, dir) {
			root = dir // the instance sits above what it syncs (clusters/main/sync)
		}
		if root != "." && root != "" {
			seen[root] = true
		}
	}
	var roots []string
	for r := range seen {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	// Roots side by side: none inside another.
	roots = slices.DeleteFunc(roots, func(r string) bool {
		return slices.ContainsFunc(roots, func(o string) bool { return o != r && within(r, o) })
	})
	if len(roots) < 2 {
		return nil
	}
	return roots
}

// rootApplicationPath is the path an Application written in the repository syncs
// when it is a cluster's root: it deploys to the cluster Argo CD runs in, from one
// path of a repository (not a chart), and that path holds another file that names an
// Argo CD or Flux API group (the Applications it makes). "" otherwise.
func rootApplicationPath(f found, files map[string]bool) string {
	var app application
	if fromObject(f.obj.Get(), &app) != nil || !inCluster(app.Spec.Destination) {
		return ""
	}
	src := app.Spec.Source
	if src == nil && len(app.Spec.Sources) == 1 {
		src = &app.Spec.Sources[0]
	}
	if src == nil || src.Chart != "" || strings.TrimSpace(src.Path) == "" {
		return ""
	}
	dir := repoPath(src.Path)
	for name, names := range files {
		if names && name != f.obj.Source && within(path.Dir(name), dir) {
			return src.Path
		}
	}
	return ""
}

// within reports whether p is dir or below it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// syncedBy maps each directory a Flux Kustomization written in a cluster root syncs
// to that root, so that what discovery builds of that directory on its own (the
// Kustomization itself not followed: its source is not known) is that cluster's;
// "" for a directory Kustomizations of two roots sync.
func syncedBy(queue []found) map[string]string {
	out := map[string]string{}
	for _, f := range queue {
		obj := f.obj.Get()
		if f.root == "" || f.built != "" || obj.GetKind() != KindKustomization ||
			strings.SplitN(obj.GetAPIVersion(), "/", 2)[0] != "kustomize.toolkit.fluxcd.io" {
			continue
		}
		spec, _ := obj.Object["spec"].(map[string]any)
		p, _ := spec["path"].(string)
		dir := repoPath(p)
		if r, ok := out[dir]; ok && r != f.root {
			out[dir] = ""
			continue
		}
		out[dir] = f.root
	}
	return out
}

// rootOf is the cluster root a file's object belongs to ("": none, or no fleet).
func (d *discovery) rootOf(f found) string {
	for _, r := range d.roots {
		if within(path.Dir(f.obj.Source), r) {
			return r
		}
	}
	return ""
}

// rooted are the targets, of a fleet without those found outside every cluster
// root (a kustomization discovery built on its own) that a cluster root reaches
// too: each is that cluster's.
func (d *discovery) rooted() []Target {
	if len(d.roots) == 0 {
		return d.targets
	}
	inRoot := map[string]bool{}
	for _, t := range d.targets {
		if t.Root != "" {
			inRoot[strings.TrimPrefix(t.Name, t.Root+"/")+"\x00"+t.Cluster] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(d.targets), func(t Target) bool {
		return t.Root == "" && inRoot[t.Name+"\x00"+t.Cluster]
	})
}
