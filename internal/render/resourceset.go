package render

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drift-gitops/drift/internal/fluxop"
	"github.com/drift-gitops/drift/internal/reason"
)

// RendererResourceSet renders a Flux Operator ResourceSet: its resources for its
// static inputs, as flux-operator renders them (internal/fluxop).
const RendererResourceSet = "resourceset"

// ResourceSetSpec is a ResourceSet to render, with the ResourceSetInputProviders the
// repository holds, and where the ResourceSet is written.
type ResourceSetSpec struct {
	Object    map[string]any
	Providers []map[string]any `json:",omitempty"`
	Source    string
	Doc       int
}

// resourceSet renders a ResourceSet's resources; a ResourceSet whose inputs come from
// a provider drift cannot read (pull requests, OCI tags) renders nothing and says
// why. Templates run in the render worker, under its limits.
func resourceSet(spec *ResourceSetSpec, limits Limits) *Result {
	res := &Result{Inputs: Inputs{Files: []string{spec.Source}}}
	name := fmt.Sprintf("ResourceSet %s/%s", stringAt(spec.Object, "metadata", "namespace"), stringAt(spec.Object, "metadata", "name"))
	objs, skipped, err := fluxop.ExpandResourceSet(context.Background(), spec.Object, spec.Providers, limits.Objects)
	switch {
	case err != nil:
		why := reason.RenderFailed
		if isLimit(err) {
			why = reason.TooLarge
		}
		res.Failures = append(res.Failures, Failure{Source: spec.Source, Doc: spec.Doc, Reason: why, Message: err.Error()})
		return res
	case skipped != "":
		res.Notes = append(res.Notes, name+" is not rendered: "+skipped)
		return res
	}
	for i, o := range objs {
		res.Objects = append(res.Objects, Object{Obj: &unstructured.Unstructured{Object: o}, Source: spec.Source, Doc: spec.Doc, Item: i + 1})
	}
	return res
}

func isLimit(err error) bool {
	return err != nil && strings.Contains(err.Error(), fluxop.LimitPhrase)
}

// stringAt is the string at a path of an object ("" when there is none).
func stringAt(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}
