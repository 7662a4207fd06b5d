package fluxop

import (
	"errors"
	"fmt"
	"time"

	"github.com/Masterminds/semver/v3"
)

// The labels and annotations the operator puts on every object of a
// FluxInstance, the sync source and Kustomization included.
const (
	// OwnerNameLabel and OwnerNamespaceLabel name the FluxInstance owning an
	// object (the operator's inventory and garbage collection select on them).
	OwnerNameLabel      = "fluxcd.controlplane.io/name"
	OwnerNamespaceLabel = "fluxcd.controlplane.io/namespace"
	// DefaultNamespace is the namespace of a FluxInstance that names none (the
	// operator's CLI default; in a cluster it is the namespace it is applied to).
	DefaultNamespace = "flux-system"
	// defaultSyncInterval is spec.sync.interval when not set (the CRD default).
	defaultSyncInterval = "1m"
	// syncKustomizationInterval is the root Kustomization's interval, fixed.
	syncKustomizationInterval = "10m0s"
)

// SyncOptions is what SyncObjectsWith needs to know beyond the FluxInstance.
type SyncOptions struct {
	// FluxVersion is the Flux version the operator resolves
	// spec.distribution.version to ("v2.7.0"): the newest its distribution
	// artifact holds that satisfies the constraint. When "", a constraint naming
	// one version is that version; any other leaves the
	// app.kubernetes.io/version label out, and OCIRepository and Bucket sources
	// are v1 when the constraint admits Flux 2.6.0 or later.
	FluxVersion string
}

// instanceSync is a FluxInstance's spec.sync, read and defaulted.
type instanceSync struct {
	name, kind, url, ref, path, interval, pullSecret, provider string
}

// SyncObjects are the source and root Kustomization a FluxInstance's spec.sync
// makes, as the operator makes them (nil, nil when it has no sync). See
// SyncObjectsWith.
func SyncObjects(instance map[string]any) ([]map[string]any, error) {
	return SyncObjectsWith(instance, SyncOptions{})
}

// SyncObjectsWith are the source (GitRepository, OCIRepository or Bucket) and
// the root Kustomization a FluxInstance's spec.sync makes, in that order, as
// the operator builds and applies them: both named spec.sync.name (default: the
// FluxInstance's namespace) in the FluxInstance's namespace (default
// flux-system), the source at spec.sync.interval (default 1m) with spec.sync.ref
// as its ref.name (Git), ref.tag (OCI) or bucketName (Bucket), the Kustomization
// every 10m with prune: true at spec.sync.path; then the operator's labels and
// annotations, the multitenant profile's serviceAccountName and the
// spec.kustomize.patches that target them, the owner labels and
// spec.commonMetadata. nil, nil when the FluxInstance has no spec.sync. It
// does not look at ReconcileDisabled: the caller decides what a FluxInstance the
// operator does not reconcile means.
func SyncObjectsWith(instance map[string]any, opts SyncOptions) ([]map[string]any, error) {
	if kind, _ := instance["kind"].(string); kind != "FluxInstance" {
		return nil, fmt.Errorf("%s: not a FluxInstance", objectName(fmt.Sprint(instance["kind"]), instance))
	}
	name, namespace := metaString(instance, "name"), metaString(instance, "namespace")
	if namespace == "" {
		namespace = DefaultNamespace
	}
	where := "FluxInstance " + namespace + "/" + name
	if name == "" {
		return nil, fmt.Errorf("%s: no metadata.name", where)
	}
	sync, err := mapField(instance, "spec.sync")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if sync == nil {
		return nil, nil
	}
	s, err := readSync(instance, namespace)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	constraint, err := stringField(instance, "spec.distribution.version")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if constraint == "" {
		return nil, fmt.Errorf("%s: spec.distribution.version is required", where)
	}
	version, err := fluxVersion(constraint, opts.FluxVersion)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if err := checkProvider(s, version); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	objs, err := buildSync(instance, namespace, version, sourceAPIVersion(version, constraint), s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return objs, nil
}

// readSync reads spec.sync as the CRD admits it: kind, url, ref and path
// required, kind and provider from their enums, interval a duration.
func readSync(instance map[string]any, namespace string) (*instanceSync, error) {
	s := &instanceSync{}
	for _, f := range []struct {
		dst  *string
		path string
	}{
		{&s.name, "spec.sync.name"}, {&s.kind, "spec.sync.kind"}, {&s.url, "spec.sync.url"},
		{&s.ref, "spec.sync.ref"}, {&s.path, "spec.sync.path"}, {&s.interval, "spec.sync.interval"},
		{&s.pullSecret, "spec.sync.pullSecret"}, {&s.provider, "spec.sync.provider"},
	} {
		v, err := stringField(instance, f.path)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	switch s.kind {
	case "GitRepository", "OCIRepository", "Bucket":
	case "":
		return nil, errors.New("spec.sync.kind is required")
	default:
		return nil, fmt.Errorf("spec.sync.kind %q: not GitRepository, OCIRepository or Bucket", s.kind)
	}
	for _, req := range []struct{ v, path string }{{s.url, "url"}, {s.ref, "ref"}, {s.path, "path"}} {
		if req.v == "" {
			return nil, fmt.Errorf("spec.sync.%s is required", req.path)
		}
	}
	if s.name == "" {
		s.name = namespace
	}
	if len(s.name) > 63 {
		return nil, fmt.Errorf("spec.sync.name %q: longer than 63 characters", s.name)
	}
	if s.interval == "" {
		s.interval = defaultSyncInterval
	}
	d, err := time.ParseDuration(s.interval)
	if err != nil {
		return nil, fmt.Errorf("spec.sync.interval: %w", err)
	}
	// The operator writes the interval as metav1.Duration prints it: 1h0m0s.
	s.interval = d.String()
	return s, nil
}

// checkProvider refuses what the CRD's rules and the operator's ValidateSync
// refuse: providers outside the enum, gcp for a GitRepository, github for
// anything else, aws for a GitRepository before Flux 2.9.0 (when the version is
// known).
func checkProvider(s *instanceSync, version string) error {
	switch s.provider {
	case "", "generic", "aws", "azure":
	case "gcp":
		if s.kind == "GitRepository" {
			return errors.New("sync.provider 'gcp' is only supported for OCIRepository and Bucket")
		}
	case "github":
		if s.kind != "GitRepository" {
			return errors.New("sync.provider 'github' is only supported for GitRepository")
		}
	default:
		return fmt.Errorf("spec.sync.provider %q: not generic, aws, azure, gcp or github", s.provider)
	}
	if s.provider == "aws" && s.kind == "GitRepository" && version != "" {
		v, err := semver.NewVersion(version)
		if err == nil && v.LessThan(semver.MustParse("2.9.0")) {
			return fmt.Errorf("sync.provider 'aws' for GitRepository requires Flux version >= 2.9.0, got '%s'", version)
		}
	}
	return nil
}
