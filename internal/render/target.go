package render

import (
	"fmt"
	"io/fs"

	"k8s.io/client-go/rest"
	kustypes "sigs.k8s.io/kustomize/api/types"

	"github.com/drift-gitops/drift/internal/reason"
)

// Renderers.
const (
	RendererPlain     = "plain"
	RendererKustomize = "kustomize"
	RendererHelm      = "helm"
)

// Spec says what to render and how.
type Spec struct {
	// Path is the repository path of the directory (or, for plain, file) to render.
	Path string
	// Renderer is plain, kustomize, helm or resourceset, as plan decided it (from
	// drift.yaml, or Detect); a spec without one renders as a failure.
	Renderer string
	// Helm holds the options of a helm target.
	Helm HelmOptions
	// AsFlux builds a kustomize target as Flux's kustomize-controller does: a
	// directory without a kustomization file over one generated as Flux generates it
	// (KustomizeAsFlux).
	AsFlux bool `json:",omitempty"`
	// HelmCharts are the fetched archives of a kustomization's helmCharts entries
	// whose charts are not in the repository, by chartKey (set by the render cache).
	HelmCharts map[string]string `json:",omitempty"`
	// FluxIgnore is the GitRepository's spec.ignore, left out of an AsFlux build
	// with the repository's .sourceignore files and Flux's default exclusions.
	FluxIgnore string `json:",omitempty"`
	// ArtifactExcludes are the exclude patterns of the ArtifactGenerator copies that
	// make the ExternalArtifact an AsFlux build reads, left out of it as FluxIgnore.
	ArtifactExcludes []ArtifactExclude `json:",omitempty"`
	// Kustomize is what an applier sets on a kustomize target's kustomization before
	// building it: Argo CD's kustomize options (its `kustomize edit` calls) and a Flux
	// Kustomization's spec (its generator). Nil leaves the kustomization as it is.
	Kustomize *KustomizeOptions `json:",omitempty"`
	// Directory is Argo CD's directory options for a plain target; nil reads the
	// directory as drift does (recursively).
	Directory *DirectoryOptions `json:",omitempty"`
	// Substitute is a Flux Kustomization's postBuild variables (substituteFrom read,
	// substitute over them), replaced in the built objects as Flux replaces them; nil
	// substitutes nothing.
	Substitute map[string]string `json:",omitempty"`
	// ResourceSet is the Flux Operator ResourceSet a target of RendererResourceSet
	// renders.
	ResourceSet *ResourceSetSpec `json:",omitempty"`
	// ObjectsOnly reads a plain target's Kubernetes objects only: a document without
	// apiVersion or kind (a values file, Chart.yaml, another tool's YAML) is no object
	// and no failure, and a note names the files that hold such documents. For a path
	// drift previews on its own, which no applier defines.
	ObjectsOnly bool `json:",omitempty"`
	// Decrypt is a Flux Kustomization's spec.decryption.provider ("sops"): what
	// applies the target decrypts its SOPS-encrypted Secrets first. The render
	// leaves them as written; drift's own process decrypts them (internal/sopsdoc).
	Decrypt string `json:",omitempty"`
	// Overlay are files drift's own process replaced before the build, by
	// slash-separated repository path, which the build reads in place of the
	// repository's: the files a Flux Kustomization's secretGenerators read, decrypted
	// as kustomize-controller decrypts them (preview's decryptSources), and
	// kustomization files whose KSOPS generators are read as resources. Never in JSON
	// (the render cache's key): Overlaid, a digest of the replaced files as the
	// repository holds them, stands for it there.
	Overlay  map[string]string `json:"-"`
	Overlaid string            `json:",omitempty"`
}

// KustomizeOptions are edits to a kustomization, made as `kustomize edit` makes them
// (Argo CD) and as Flux's generator makes them, before the build.
type KustomizeOptions struct {
	NamePrefix string `json:",omitempty"`
	NameSuffix string `json:",omitempty"`
	// Namespace replaces the kustomization's namespace (Argo CD's kustomize.namespace,
	// Flux's targetNamespace).
	Namespace string `json:",omitempty"`
	// Images replace the kustomization's image of the same name, or are added.
	Images []kustypes.Image `json:",omitempty"`
	// MergeImages sets only the fields an image gives on the kustomization's image of
	// the same name, its tag and digest together (Flux's generator), instead of
	// replacing the entry (`kustomize edit set image`, which Argo CD runs).
	MergeImages bool `json:",omitempty"`
	// CommonLabels and CommonAnnotations are added to the kustomization's own; one it
	// already has is replaced only when forced (Argo CD's forceCommonLabels and
	// forceCommonAnnotations, kustomize edit's --force), else the build fails as
	// `kustomize edit add` fails.
	CommonLabels           map[string]string `json:",omitempty"`
	CommonAnnotations      map[string]string `json:",omitempty"`
	ForceCommonLabels      bool              `json:",omitempty"`
	ForceCommonAnnotations bool              `json:",omitempty"`
	// Replicas set the count of the named workloads, replacing an entry of the same
	// name (`kustomize edit set replicas`, Argo CD's kustomize.replicas).
	Replicas []kustypes.Replica `json:",omitempty"`
	// Patches and Components are added after the kustomization's own.
	Patches    []kustypes.Patch `json:",omitempty"`
	Components []string         `json:",omitempty"`
}

// DirectoryOptions are Argo CD's options for a directory of manifests.
type DirectoryOptions struct {
	// Recurse reads subdirectories too (Argo CD's default is not to).
	Recurse bool `json:",omitempty"`
	// Include and Exclude are Argo CD's globs over paths relative to the directory
	// ({a,b} alternatives allowed); empty includes everything, excludes nothing.
	Include string `json:",omitempty"`
	Exclude string `json:",omitempty"`
}

// Detect picks the renderer for a path: a directory with a kustomization file is
// kustomize, one with Chart.yaml is Helm, and so is a chart whose Chart.yaml a build
// step generates (Chart.template.yaml, or values.yaml and templates/): its templates
// are not YAML, and the Helm renderer says, once, what is missing. Anything else is
// plain.
func Detect(fsys fs.FS, p string) string {
	dir := cleanDir(p)
	if info, err := fs.Stat(fsys, dir); err != nil || !info.IsDir() {
		return RendererPlain
	}
	if findKustomization(fsys, dir) != "" {
		return RendererKustomize
	}
	if info, err := fs.Stat(fsys, joinRepo(dir, "Chart.yaml")); err == nil && !info.IsDir() {
		return RendererHelm
	}
	if _, unbuilt := unbuiltChart(fsys, dir); unbuilt {
		return RendererHelm
	}
	return RendererPlain
}

// Render renders one target in this process, with the default limits on output and
// objects; the limits on memory, stack and time need a worker (Worker). An error
// means the target could not be attempted at all (its path is missing); what fails
// while rendering is in the result's Failures.
func Render(fsys fs.FS, spec Spec) (*Result, error) {
	return RenderWith(fsys, spec, DefaultLimits(), nil)
}

// RenderWith renders spec in this process under limits (a render worker's rendering);
// lookup is the connection for a Helm target's lookup, if any.
func RenderWith(fsys fs.FS, spec Spec, limits Limits, lookup *rest.Config) (*Result, error) {
	if len(spec.Overlay) > 0 {
		fsys = overlayFS{FS: fsys, files: spec.Overlay}
	}
	var res *Result
	var err error
	switch spec.Renderer {
	case "":
		// plan decides every target's renderer (plan.Resolve); render never does.
		return &Result{Failures: []Failure{{Source: TargetSource(spec), Reason: reason.RenderFailed,
			Message: "no renderer was decided for this target: this is a bug in drift, please report it"}}}, nil
	case RendererPlain:
		res, err = Plain(fsys, Options{Paths: []string{spec.Path}, Directory: spec.Directory, ObjectsOnly: spec.ObjectsOnly, Hold: true})
	case RendererKustomize:
		res = kustomizeSpec(fsys, spec)
	case RendererHelm:
		res = helm(fsys, spec.Path, spec.Helm, limits, lookup)
	case RendererResourceSet:
		if spec.ResourceSet == nil {
			return nil, fmt.Errorf("a ResourceSet target without its ResourceSet: this is a bug in drift, please report it")
		}
		res = resourceSet(spec.ResourceSet, limits)
	default:
		return nil, fmt.Errorf("unknown renderer %q: use plain, kustomize or helm", spec.Renderer)
	}
	capObjects(res, spec, limits.Objects)
	if err == nil {
		explainEmpty(fsys, spec, res)
	}
	return res, err
}
