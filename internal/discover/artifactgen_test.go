package discover

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/drift-gitops/drift/internal/render"
)

// copiedPrefix maps source-watcher's copy operations that move a directory's tree
// whole (cp -r dir/** dest/: calculateGlobDestination strips dir) to the
// repository directory the artifact's root stands for, and says why for others.
func TestCopiedPrefix(t *testing.T) {
	for _, c := range []struct {
		from, to    string
		exclude     []string
		strategy    string
		prefix, why string
	}{
		{from: "@repo/infrastructure/**", to: "@artifact/", prefix: "infrastructure"},
		{from: "@repo/apps/base/**", to: "@artifact/base/", prefix: "apps"},
		{from: "@repo/apps/**", to: "@artifact/apps/", prefix: ""},
		{from: "@repo/deploy/prod/**", to: "@artifact/prod/", prefix: "deploy"},
		{from: "@repo/apps/base/**", to: "@artifact/other/", why: "moves it to another place"},
		{from: "@repo/apps/*.yaml", to: "@artifact/", why: "is not a directory's whole tree (dir/**)"},
		{from: "@repo/apps/**", to: "@artifact/apps/", exclude: []string{"*.md"}, prefix: ""},
		{from: "@repo/apps/**", to: "@artifact/apps/", exclude: []string{"[a-"}, why: `has an invalid exclude pattern "[a-" (source-watcher refuses it)`},
		{from: "@repo/apps/**", to: "@artifact/apps/", strategy: "Merge", prefix: ""},
		{from: "@repo/apps/**", to: "@artifact/apps/", strategy: "Extract", why: "uses the Extract strategy"},
		{from: "@repo/apps/**", to: "@artifact/apps", why: "does not copy into a directory of the artifact"},
	} {
		prefix, _, why := copiedPrefix(c.from, c.to, c.exclude, c.strategy)
		if prefix != c.prefix || why != c.why {
			t.Errorf("%s → %s: %q, %q; want %q, %q", c.from, c.to, prefix, why, c.prefix, c.why)
		}
	}
}

// A Kustomization whose source is an ExternalArtifact that an ArtifactGenerator of
// the repository builds from this repository (as Flux's example repository now
// deploys) is previewed from the directories the generator copies; one built in a
// way drift does not map says why, and reads as a source that may be this
// repository (its changes are not previewed).
func TestKustomizationsOfAnArtifactGeneratorAreRead(t *testing.T) {
	gen := func(copies string) string {
		return "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: gen, namespace: flux-system}\n" +
			"spec:\n  sources:\n    - {alias: monorepo, kind: GitRepository, name: flux-system}\n  artifacts:\n    - name: apps\n      originRevision: '@monorepo'\n      copy:\n" + copies
	}
	ks := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n" +
		"spec: {interval: 1h, path: ./production, prune: true, sourceRef: {kind: ExternalArtifact, name: apps}}\n"
	for name, c := range map[string]struct{ copies, path, skipped string }{
		"whole trees": {copies: "        - {from: '@monorepo/apps/base/**', to: '@artifact/base/'}\n        - {from: '@monorepo/apps/production/**', to: '@artifact/production/'}\n", path: "apps/production"},
		"excluded":    {copies: "        - {from: '@monorepo/apps/**', to: '@artifact/', exclude: ['*.md']}\n", path: "apps/production"},
		"moved":       {copies: "        - {from: '@monorepo/apps/base/**', to: '@artifact/base/'}\n        - {from: '@monorepo/other/production/**', to: '@artifact/production/'}\n", skipped: "do not keep their places"},
	} {
		fsys := fstest.MapFS{
			"clusters/prod/sync.yaml":            {Data: []byte("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: 'https://git.example/fleet', ref: {branch: main}}\n")},
			"clusters/prod/gen.yaml":             {Data: []byte(gen(c.copies))},
			"clusters/prod/apps.yaml":            {Data: []byte(ks)},
			"apps/base/cm.yaml":                  {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n")},
			"apps/production/kustomization.yaml": {Data: []byte("resources: [../base]\n")},
		}
		opts := Options{RepoURLs: []string{"https://git.example/fleet"}, Revisions: []string{"main"},
			Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) }}
		res, err := Discover(context.Background(), fsys, opts)
		if err != nil {
			t.Fatal(err)
		}
		apps := byName(res)["Kustomization/flux-system/apps"]
		switch {
		case c.path != "" && (apps.Skipped != "" || len(apps.Specs) != 1 || apps.Specs[0].Path != c.path || !contains(apps.Inputs, "clusters/prod/gen.yaml")):
			t.Errorf("%s: %+v", name, apps)
		case c.skipped != "" && !strings.Contains(apps.Skipped, c.skipped):
			t.Errorf("%s: skipped %q, want it to say %q", name, apps.Skipped, c.skipped)
		}
	}
}

// A copy's exclude patterns leave files out of the ExternalArtifact as source-watcher
// does (shouldExcludePath): a pattern without a slash matches a file's name anywhere,
// one with a slash its path below the copied directory or from the source's root;
// the Kustomization's build over it does not see them. The files expected are those
// source-watcher's own builder (internal/builder applyCopyOperations, at 825fa15,
// v2.2.0+12) copied for this fixture: production/app.yaml, production/keep/drop.yaml
// and production/keep/other.yaml.
func TestArtifactGeneratorExcludesAreLeftOutOfTheBuild(t *testing.T) {
	cm := func(name string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n")}
	}
	fsys := fstest.MapFS{
		"clusters/prod/sync.yaml": {Data: []byte("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: 'https://git.example/fleet', ref: {branch: main}}\n")},
		"clusters/prod/gen.yaml": {Data: []byte("apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: gen, namespace: flux-system}\n" +
			"spec:\n  sources: [{alias: repo, kind: GitRepository, name: flux-system}]\n  artifacts:\n    - name: apps\n      copy:\n" +
			"        - {from: '@repo/apps/**', to: '@artifact/', exclude: ['*.test.yaml', 'production/skip/**', 'apps/production/drop.yaml']}\n")},
		"clusters/prod/apps.yaml": {Data: []byte("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\n" +
			"spec: {interval: 1h, path: ./production, prune: true, sourceRef: {kind: ExternalArtifact, name: apps}}\n")},
		"apps/production/app.yaml":        cm("app"),
		"apps/production/app.test.yaml":   cm("by-name"),
		"apps/production/skip/x.yaml":     cm("by-relative-path"),
		"apps/production/drop.yaml":       cm("by-root-path"),
		"apps/production/keep/drop.yaml":  cm("kept"),
		"apps/production/keep/other.yaml": cm("other"),
	}
	opts := Options{RepoURLs: []string{"https://git.example/fleet"}, Revisions: []string{"main"},
		Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) }}
	res, err := Discover(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	apps := byName(res)["Kustomization/flux-system/apps"]
	if apps.Skipped != "" || len(apps.Specs) != 1 {
		t.Fatalf("apps: %+v", apps)
	}
	out, err := render.Render(fsys, apps.Specs[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out.Objects {
		got = append(got, o.Name())
	}
	if strings.Join(got, ",") != "app,kept,other" || len(out.Failures) != 0 {
		t.Errorf("rendered %v, failures %v; want app,kept,other", got, out.Failures)
	}
}

// A pathPattern makes one set of artifacts per directory it matches, as
// source-watcher's buildArtifactRequests makes them: for this fixture its own code
// (at 825fa15) made podinfo-manifests from "@repo/apps/podinfo/**" and
// redis-manifests from "@repo/apps/Redis/**" (names lowercased, copies as written).
// Each Kustomization on one of them is previewed from its directory.
func TestArtifactGeneratorPathPatternsAreExpanded(t *testing.T) {
	cm := func(name string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n")}
	}
	ks := func(name, artifact string) string {
		return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec: {interval: 1h, path: ./, prune: true, sourceRef: {kind: ExternalArtifact, name: " + artifact + "}}\n---\n"
	}
	fsys := fstest.MapFS{
		"clusters/prod/sync.yaml": {Data: []byte("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: 'https://git.example/fleet', ref: {branch: main}}\n")},
		"clusters/prod/gen.yaml": {Data: []byte("apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: gen, namespace: flux-system}\n" +
			"spec:\n  sources: [{alias: repo, kind: GitRepository, name: flux-system}]\n  pathPattern: '@repo/apps/{app}'\n  artifacts:\n" +
			"    - name: '{app}-manifests'\n      copy: [{from: '@repo/apps/{app}/**', to: '@artifact/'}]\n")},
		"clusters/prod/apps.yaml":         {Data: []byte(ks("podinfo", "podinfo-manifests") + ks("redis", "redis-manifests") + ks("missing", "other-manifests"))},
		"apps/podinfo/base/cm.yaml":       cm("podinfo-base"),
		"apps/podinfo/overlays/cm.yaml":   cm("podinfo-overlay"),
		"apps/podinfo/kustomization.yaml": {Data: []byte("resources: [base/cm.yaml]\n")},
		"apps/Redis/cm.yaml":              cm("redis"),
		"infra/x/cm.yaml":                 cm("x"),
	}
	opts := Options{RepoURLs: []string{"https://git.example/fleet"}, Revisions: []string{"main"},
		Render: func(spec render.Spec) (*render.Result, error) { return render.Render(fsys, spec) }}
	res, err := Discover(context.Background(), fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := byName(res)
	for name, want := range map[string]string{"podinfo": "apps/podinfo", "redis": "apps/Redis"} {
		k := ts["Kustomization/flux-system/"+name]
		if k.Skipped != "" || len(k.Specs) != 1 || k.Specs[0].Path != want {
			t.Errorf("%s: %+v", name, k)
		}
	}
	if m := ts["Kustomization/flux-system/missing"]; !strings.Contains(m.Skipped, "which no ArtifactGenerator drift finds in the repository builds") {
		t.Errorf("missing: %q", m.Skipped)
	}
}
