//go:build ignore

// Command drift-fluxop-oracle runs flux-operator's own code over drift's
// internal/fluxop test cases and records what it makes: for a FluxInstance the
// sync source and Kustomization that internal/builder.Build makes (with the
// options the FluxInstance controller gives it) after the controller's owner
// labels and spec.commonMetadata; for a ResourceSet the objects
// internal/inputs.Combine and internal/builder.BuildResourceSetFromSpec make
// (with the providers the controller selects) after its owner labels and
// spec.commonMetadata.
//
// It is drift's code, not flux-operator's: copy it into a flux-operator
// checkout as hack/drift-fluxop-oracle/main.go (it imports the operator's
// internal packages, which only code inside that module may; the ignore build
// tag keeps drift's own go commands off it) and run it from the checkout's
// root, where it reads internal/builder/testdata's Flux manifests (the paths
// are the checkout's; hack/fluxop-oracle/README.md has every step):
//
//	go build -o /tmp/drift-fluxop-oracle ./hack/drift-fluxop-oracle/main.go
//	/tmp/drift-fluxop-oracle -revision <commit> <drift>/internal/fluxop/testdata/oracle
//
// For every NAME.case.yaml it writes NAME.want.json, naming the revision given.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"strings"
	"time"

	"github.com/fluxcd/pkg/ssa"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	fluxcdv1 "github.com/controlplaneio-fluxcd/flux-operator/api/v1"
	"github.com/controlplaneio-fluxcd/flux-operator/internal/builder"
	"github.com/controlplaneio-fluxcd/flux-operator/internal/inputs"
)

// testCase is a NAME.case.yaml: a FluxInstance, or a ResourceSet with the
// ResourceSetInputProviders in its repository.
type testCase struct {
	Description  string            `json:"description"`
	FluxInstance json.RawMessage   `json:"fluxInstance,omitempty"`
	ResourceSet  json.RawMessage   `json:"resourceSet,omitempty"`
	Providers    []json.RawMessage `json:"providers,omitempty"`
}

// want is a NAME.want.json.
type want struct {
	Oracle      string           `json:"oracle"`
	FluxVersion string           `json:"fluxVersion,omitempty"`
	Objects     []map[string]any `json:"objects"`
	Error       string           `json:"error,omitempty"`
}

// manifestVersions are the Flux manifests in the operator's builder testdata
// that stand in for the distribution artifact.
var manifestVersions = []string{"v2.3.0", "v2.6.0", "v2.7.0"}

func main() {
	revision := flag.String("revision", "", "the flux-operator revision (commit) this checkout is")
	flag.Parse()
	if flag.NArg() != 1 || *revision == "" {
		fmt.Fprintln(os.Stderr, "usage: drift-fluxop-oracle -revision <commit> <dir of *.case.yaml>")
		os.Exit(2)
	}
	dataDir, err := manifests()
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(filepath.Dir(dataDir))
	cases, err := filepath.Glob(filepath.Join(flag.Arg(0), "*.case.yaml"))
	if err != nil {
		fail(err)
	}
	for _, path := range cases {
		data, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		var tc testCase
		if err := yaml.UnmarshalStrict(data, &tc); err != nil {
			fail(fmt.Errorf("%s: %w", path, err))
		}
		w := want{Oracle: "flux-operator " + *revision}
		var objs []*unstructured.Unstructured
		switch {
		case tc.FluxInstance != nil:
			w.Oracle += ": internal/builder.Build with the FluxInstance controller's options"
			objs, w.FluxVersion, err = buildInstance(tc.FluxInstance, dataDir)
		case tc.ResourceSet != nil:
			w.Oracle += ": internal/inputs.Combine and internal/builder.BuildResourceSetFromSpec"
			objs, err = buildResourceSet(tc.ResourceSet, tc.Providers)
		default:
			fail(fmt.Errorf("%s: neither fluxInstance nor resourceSet", path))
		}
		w.Objects = []map[string]any{}
		if err != nil {
			w.Error = err.Error()
		} else {
			for _, o := range objs {
				w.Objects = append(w.Objects, o.Object)
			}
		}
		out, err := json.MarshalIndent(w, "", "  ")
		if err != nil {
			fail(err)
		}
		dst := strings.TrimSuffix(path, ".case.yaml") + ".want.json"
		if err := os.WriteFile(dst, append(out, '\n'), 0o644); err != nil {
			fail(err)
		}
		fmt.Println(dst)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// manifests copies the builder testdata's Flux manifests into a temporary
// directory laid out as the distribution artifact's flux/ directory: one
// directory per version (copies, as Build writes into what it copies).
func manifests() (string, error) {
	tmp, err := os.MkdirTemp("", "drift-fluxop-oracle")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "flux")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, v := range manifestVersions {
		src, err := filepath.Abs(filepath.Join("internal", "builder", "testdata", v))
		if err != nil {
			return "", err
		}
		if err := os.CopyFS(filepath.Join(dir, v), os.DirFS(src)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// buildInstance builds a FluxInstance as the FluxInstance controller's build
// does (options from the spec, Build over the manifests of the version its
// distribution.version matches) and returns the sync objects (the Flux sources
// and Kustomizations), with the owner labels and spec.commonMetadata the
// controller's apply sets, and the version matched.
func buildInstance(raw json.RawMessage, dataDir string) ([]*unstructured.Unstructured, string, error) {
	var obj fluxcdv1.FluxInstance
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, "", err
	}
	// The API server's defaults (the CRD's) the operator then reads.
	if obj.Namespace == "" {
		obj.Namespace = "flux-system"
	}
	if obj.Spec.Sync != nil && obj.Spec.Sync.Interval == nil {
		obj.Spec.Sync.Interval = &metav1.Duration{Duration: time.Minute}
	}
	if obj.Spec.Cluster != nil {
		if obj.Spec.Cluster.Type == "" {
			obj.Spec.Cluster.Type = "kubernetes"
		}
		if obj.Spec.Cluster.Domain == "" {
			obj.Spec.Cluster.Domain = "cluster.local"
		}
	}

	ver, err := builder.MatchVersion(dataDir, obj.Spec.Distribution.Version)
	if err != nil {
		return nil, "", err
	}

	// From here on as internal/controller/fluxinstance_controller.go build().
	options := builder.MakeDefaultOptions()
	options.Version = ver
	options.Registry = obj.GetDistribution().Registry
	options.Variant = obj.GetDistribution().Variant
	options.ImagePullSecret = obj.GetDistribution().ImagePullSecret
	options.Namespace = obj.GetNamespace()
	options.Components = obj.GetComponents()
	options.NetworkPolicy = obj.GetCluster().NetworkPolicy
	if obj.GetCluster().Domain != "" {
		options.ClusterDomain = obj.GetCluster().Domain
	}
	options.Patches += builder.GetProfileClusterType(obj.GetCluster().Type)
	options.Patches += builder.GetProfileClusterSize(obj.GetCluster().Size)
	if obj.GetCluster().Multitenant {
		options.Patches += builder.GetProfileMultitenant(obj.GetCluster().TenantDefaultServiceAccount)
	}
	if err := options.ValidateAndPatchComponents(); err != nil {
		return nil, ver, err
	}
	if err := options.ValidateAndApplyWorkloadIdentityConfig(obj.GetCluster()); err != nil {
		return nil, ver, err
	}
	if obj.Spec.Sharding != nil {
		options.ShardingKey = obj.Spec.Sharding.Key
		options.Shards = obj.Spec.Sharding.Shards
		options.ShardingStorage = obj.IsShardingStorageEnabled()
	}
	if obj.Spec.Storage != nil {
		options.ArtifactStorage = &builder.ArtifactStorage{Class: obj.Spec.Storage.Class, Size: obj.Spec.Storage.Size}
	}
	if obj.Spec.Sync != nil {
		syncName := obj.GetNamespace()
		if obj.Spec.Sync.Name != "" {
			syncName = obj.Spec.Sync.Name
		}
		options.Sync = &builder.Sync{
			Name:       syncName,
			Kind:       obj.Spec.Sync.Kind,
			Interval:   obj.Spec.Sync.Interval.Duration.String(),
			Ref:        obj.Spec.Sync.Ref,
			PullSecret: obj.Spec.Sync.PullSecret,
			URL:        obj.Spec.Sync.URL,
			Path:       obj.Spec.Sync.Path,
			Provider:   obj.Spec.Sync.Provider,
		}
		if err := options.ValidateSync(); err != nil {
			return nil, ver, err
		}
	}
	if obj.Spec.Kustomize != nil && len(obj.Spec.Kustomize.Patches) > 0 {
		patchesData, err := yaml.Marshal(obj.Spec.Kustomize.Patches)
		if err != nil {
			return nil, ver, err
		}
		options.Patches += string(patchesData)
	}
	srcDir := filepath.Join(dataDir, ver)
	images, err := builder.ExtractComponentImages(srcDir, options)
	if err != nil {
		return nil, ver, err
	}
	options.ComponentImages = images

	tmpDir, err := builder.MkdirTempAbs("", "flux")
	if err != nil {
		return nil, ver, err
	}
	defer os.RemoveAll(tmpDir)
	res, err := builder.Build(srcDir, tmpDir, options)
	if err != nil {
		return nil, ver, err
	}

	// As the controller's apply(): owner labels, then commonMetadata.
	objects := res.Objects
	rm := ssa.NewResourceManager(nil, nil, ssa.Owner{Field: "flux-operator", Group: fluxcdv1.GroupVersion.Group})
	rm.SetOwnerLabels(objects, obj.GetName(), obj.GetNamespace())
	if cm := obj.Spec.CommonMetadata; cm != nil {
		ssautil.SetCommonMetadata(objects, cm.Labels, cm.Annotations)
	}

	var out []*unstructured.Unstructured
	for _, o := range objects {
		group := o.GroupVersionKind().Group
		if group == "source.toolkit.fluxcd.io" || (group == "kustomize.toolkit.fluxcd.io" && o.GetKind() == "Kustomization") {
			out = append(out, o)
		}
	}
	return out, ver, nil
}

// buildResourceSet renders a ResourceSet as the ResourceSet controller's
// reconcile does, its providers selected as its getInputs selects them from the
// given ones (in place of the API server), each Static provider exporting its
// defaultValues with the id of its name (as flux-operator build resourceset
// --inputs-from-provider does: the runtime id is that of the UID).
func buildResourceSet(raw json.RawMessage, rawProviders []json.RawMessage) ([]*unstructured.Unstructured, error) {
	var obj fluxcdv1.ResourceSet
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	obj.SetGroupVersionKind(fluxcdv1.GroupVersion.WithKind(fluxcdv1.ResourceSetKind))
	rsipGVK := fluxcdv1.GroupVersion.WithKind(fluxcdv1.ResourceSetInputProviderKind)

	var providers []*fluxcdv1.ResourceSetInputProvider
	for _, rp := range rawProviders {
		var p fluxcdv1.ResourceSetInputProvider
		if err := json.Unmarshal(rp, &p); err != nil {
			return nil, err
		}
		p.SetGroupVersionKind(rsipGVK)
		if p.GetNamespace() == "" {
			p.SetNamespace(obj.GetNamespace())
		}
		if p.Spec.Type != fluxcdv1.InputProviderStatic {
			return nil, fmt.Errorf("oracle: provider %s is of type %s, only Static is recorded", p.GetName(), p.Spec.Type)
		}
		vals := p.Spec.DefaultValues
		if len(vals) == 0 {
			vals = make(fluxcdv1.ResourceSetInput)
		}
		id, err := inputs.JSON(inputs.ID(p.GetName()))
		if err != nil {
			return nil, err
		}
		vals["id"] = id
		p.Status.ExportedInputs = []fluxcdv1.ResourceSetInput{vals}
		providers = append(providers, &p)
	}

	// As internal/controller/resourceset_controller.go reconcile().
	if err := builder.ValidateResourceSetSpec(obj.Spec); err != nil {
		return nil, fmt.Errorf("build failed: %w", err)
	}
	providerMap := map[inputs.ProviderKey]fluxcdv1.InputProvider{}
	for _, src := range obj.Spec.InputsFrom {
		switch {
		case src.Name != "":
			key := inputs.ProviderKey{GVK: rsipGVK, Name: src.Name, Namespace: obj.GetNamespace()}
			if _, found := providerMap[key]; found {
				continue
			}
			var hit *fluxcdv1.ResourceSetInputProvider
			for _, p := range providers {
				if p.GetName() == src.Name && p.GetNamespace() == obj.GetNamespace() {
					hit = p
				}
			}
			if hit == nil {
				return nil, fmt.Errorf("failed to compute inputs: failed to get provider %s/%s: not found", obj.GetNamespace(), src.Name)
			}
			providerMap[key] = hit
		case src.Selector != nil:
			selector, err := metav1.LabelSelectorAsSelector(src.Selector)
			if err != nil {
				return nil, fmt.Errorf("failed to compute inputs: failed to parse selector %s: %w", src.Selector, err)
			}
			for _, p := range providers {
				if p.GetNamespace() == obj.GetNamespace() && selector.Matches(labels.Set(p.GetLabels())) {
					providerMap[inputs.NewProviderKey(p)] = p
				}
			}
		default:
			return nil, errors.New("failed to compute inputs: input provider reference must have either name or selector set")
		}
	}
	inputSet, err := inputs.Combine(&obj, providerMap)
	if err != nil {
		return nil, fmt.Errorf("failed to compute inputs: %w", err)
	}
	var objects []*unstructured.Unstructured
	if !(len(obj.Spec.InputsFrom) > 0 && len(inputSet) == 0) {
		steps, err := builder.BuildResourceSetFromSpec(obj.Spec, inputSet)
		if err != nil {
			return nil, fmt.Errorf("build failed: %w", err)
		}
		objects = builder.FlattenSteps(steps)
	}

	// As the controller's apply(): owner labels, then commonMetadata.
	rm := ssa.NewResourceManager(nil, nil, ssa.Owner{Field: "flux-operator", Group: fluxcdv1.GroupOwnerLabelResourceSet})
	rm.SetOwnerLabels(objects, obj.GetName(), obj.GetNamespace())
	if cm := obj.Spec.CommonMetadata; cm != nil {
		ssautil.SetCommonMetadata(objects, cm.Labels, cm.Annotations)
	}
	return objects, nil
}
