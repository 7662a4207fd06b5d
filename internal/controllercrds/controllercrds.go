// Package controllercrds holds the CustomResourceDefinitions of the GitOps controllers
// drift ships (one Flux release, flux-operator, Argo CD), served on ephemeral servers for
// the kinds a repository uses but does not define, and what a repository says about the
// controllers that install them (a FluxInstance, flux-operator's or Argo CD's chart).
//
// data/ is written by hack/controllercrds from the Go module proxy; data/releases.json
// names each release, its components and where each file comes from.
package controllercrds

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

//go:embed data
var data embed.FS

// Release is one controller release drift ships the CRDs of.
type Release struct {
	// Name is flux, flux-operator or argo-cd.
	Name       string      `json:"name"`
	Version    string      `json:"version"`
	Components []Component `json:"components"`
}

// Title names the release as people write it: "Flux v2.9.5".
func (r *Release) Title() string {
	return map[string]string{"flux": "Flux", "flux-operator": "flux-operator", "argo-cd": "Argo CD"}[r.Name] + " " + r.Version
}

// Component is one controller of a release and where its CRDs were taken from.
type Component struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	From    string   `json:"from"`
	Files   []string `json:"files"`
}

// CRD is one shipped CustomResourceDefinition.
type CRD struct {
	Object    *unstructured.Unstructured
	Release   *Release
	Component *Component
	// File is the CRD's path in drift's copy (data/...).
	File string
}

// Kind is the kind the CRD serves.
func (c *CRD) Kind() schema.GroupKind {
	group, _, _ := unstructured.NestedString(c.Object.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(c.Object.Object, "spec", "names", "kind")
	return schema.GroupKind{Group: group, Kind: kind}
}

var (
	loadOnce sync.Once
	releases []*Release
	byKind   map[schema.GroupKind]*CRD
	loadErr  error
)

func load() {
	body, err := data.ReadFile("data/releases.json")
	if err != nil {
		loadErr = err
		return
	}
	if loadErr = json.Unmarshal(body, &releases); loadErr != nil {
		return
	}
	byKind = map[schema.GroupKind]*CRD{}
	for _, rel := range releases {
		for i := range rel.Components {
			c := &rel.Components[i]
			dir := path.Join("data", rel.Name)
			if rel.Name == "flux" {
				dir = path.Join(dir, c.Name)
			}
			for _, f := range c.Files {
				file := path.Join(dir, f)
				body, err := data.ReadFile(file)
				if err != nil {
					loadErr = err
					return
				}
				obj := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(body, &obj.Object); err != nil {
					loadErr = fmt.Errorf("%s: %w", file, err)
					return
				}
				crd := &CRD{Object: obj, Release: rel, Component: c, File: file}
				byKind[crd.Kind()] = crd
			}
		}
	}
}

// Releases are the releases drift ships the CRDs of.
func Releases() ([]*Release, error) {
	loadOnce.Do(load)
	return releases, loadErr
}

// For is drift's CRD serving gk; nil when drift ships none.
func For(gk schema.GroupKind) (*CRD, error) {
	loadOnce.Do(load)
	if loadErr != nil {
		return nil, loadErr
	}
	return byKind[gk], nil
}
