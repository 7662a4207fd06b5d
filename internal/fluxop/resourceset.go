package fluxop

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// DefaultMaxObjects is the bound on the objects a ResourceSet renders when
// ExpandResourceSet is given none.
const DefaultMaxObjects = 10000

// LimitPhrase is in every error of an expansion that went past its bound on
// objects, so that a caller reading the error as text (from a render worker)
// knows it.
const LimitPhrase = "more than the limit of"

// The owner labels the operator sets on every object a ResourceSet renders.
const (
	ResourceSetNameLabel      = "resourceset.fluxcd.controlplane.io/name"
	ResourceSetNamespaceLabel = "resourceset.fluxcd.controlplane.io/namespace"
)

// ExpandResourceSet renders a ResourceSet's resources (spec.resources,
// spec.resourcesTemplate or spec.steps, in order, steps flattened) for the input
// sets its spec.inputs and the Static ResourceSetInputProviders among providers
// (those found in the repository) give, combined by its spec.inputStrategy, as
// the operator renders them, with the owner labels and spec.commonMetadata it
// sets. spec.dependsOn is a gate the operator waits on in the cluster; it does
// not change what is rendered and is not evaluated here.
//
// skipped is non-empty, saying why, when the operator's result cannot be known
// from the repository: inputs from a provider of another type (GitHub pull
// requests, OCI tags, …) or from one not in providers, or the ResourceSet's
// reconciliation disabled. A spec.inputsFrom selecting providers that export no
// input sets renders nothing, as in the operator (which then prunes what it
// made before). More than maxObjects objects (0: DefaultMaxObjects) is an error
// naming the ResourceSet and containing LimitPhrase; ctx stops the expansion.
//
// A Static provider's input set has id the id of the provider's name, as the
// operator's offline build gives it; in a cluster it is the id of the
// provider's UID, so a template using a Static provider's inputs.id renders
// other names there. In-line inputs have no built-in id; Permute's ids (of
// source names and indexes) are the operator's.
func ExpandResourceSet(ctx context.Context, rs map[string]any, providers []map[string]any, maxObjects int) (objs []map[string]any, skipped string, err error) {
	where := objectName("ResourceSet", rs)
	objs, skipped, err = expandResourceSet(ctx, rs, providers, maxObjects)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", where, err)
	}
	return objs, skipped, nil
}

func expandResourceSet(ctx context.Context, rs map[string]any, providers []map[string]any, maxObjects int) ([]map[string]any, string, error) {
	if kind, _ := rs["kind"].(string); kind != "ResourceSet" {
		return nil, "", errors.New("not a ResourceSet")
	}
	name, namespace := metaString(rs, "name"), metaString(rs, "namespace")
	if name == "" {
		return nil, "", errors.New("no metadata.name")
	}
	if namespace == "" {
		return nil, "", errors.New("no metadata.namespace")
	}
	if ReconcileDisabled(rs) {
		return nil, reconcileAnnotation + ": disabled: the operator does not reconcile it", nil
	}
	if maxObjects <= 0 {
		maxObjects = DefaultMaxObjects
	}
	steps, err := readSteps(rs)
	if err != nil {
		return nil, "", err
	}
	own, err := inlineInputs(rs, name, namespace)
	if err != nil {
		return nil, "", err
	}
	fromProviders, err := providerSources(ctx, rs, namespace, providers)
	var skip *skipError
	if errors.As(err, &skip) {
		return nil, skip.reason, nil
	}
	if err != nil {
		return nil, "", err
	}
	inputs, err := combineInputs(ctx, rs, own, fromProviders)
	if err != nil {
		return nil, "", err
	}
	if refs, _ := listField(rs, "spec.inputsFrom"); len(refs) > 0 && len(inputs) == 0 {
		return []map[string]any{}, "", nil
	}
	r := &renderer{ctx: ctx, max: maxObjects}
	objects, err := r.renderSteps(steps, inputs)
	if err != nil {
		return nil, "", err
	}
	setLabels(objects, map[string]string{ResourceSetNameLabel: name, ResourceSetNamespaceLabel: namespace})
	if err := setCommonMetadata(rs, objects); err != nil {
		return nil, "", err
	}
	out := make([]map[string]any, len(objects))
	for i, obj := range objects {
		out[i] = obj.Object
	}
	return out, "", nil
}

// ReconcileDisabled says whether an operator object (a FluxInstance, a
// ResourceSet) is annotated fluxcd.controlplane.io/reconcile: disabled (in any
// case), which stops the operator reconciling it: what it applied before stays
// as it is.
func ReconcileDisabled(obj map[string]any) bool {
	return strings.ToLower(metaStringMap(obj, "annotations")[reconcileAnnotation]) == disabledValue
}

// readSteps is spec.steps, or the one anonymous step of spec.resources and
// spec.resourcesTemplate, refusing what the operator refuses: steps with
// resources or a resourcesTemplate, a step with neither.
func readSteps(rs map[string]any) ([]step, error) {
	resources, err := listField(rs, "spec.resources")
	if err != nil {
		return nil, err
	}
	tmpl, err := stringField(rs, "spec.resourcesTemplate")
	if err != nil {
		return nil, err
	}
	rawSteps, err := listField(rs, "spec.steps")
	if err != nil {
		return nil, err
	}
	if len(rawSteps) == 0 {
		return []step{{resources: resources, template: tmpl}}, nil
	}
	if len(resources) > 0 || tmpl != "" {
		return nil, errors.New("spec.steps is mutually exclusive with spec.resources and spec.resourcesTemplate")
	}
	steps := make([]step, 0, len(rawSteps))
	for i, raw := range rawSteps {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("spec.steps[%d]: want an object, not %T", i, raw)
		}
		st := step{}
		if st.name, err = stringField(m, "name"); err != nil {
			return nil, fmt.Errorf("spec.steps[%d]: %w", i, err)
		}
		if st.resources, err = listField(m, "resources"); err != nil {
			return nil, fmt.Errorf("spec.steps[%d]: %w", i, err)
		}
		if st.template, err = stringField(m, "resourcesTemplate"); err != nil {
			return nil, fmt.Errorf("spec.steps[%d]: %w", i, err)
		}
		if len(st.resources) == 0 && st.template == "" {
			return nil, fmt.Errorf("step %q: at least one of resources or resourcesTemplate must be set", st.name)
		}
		steps = append(steps, st)
	}
	return steps, nil
}
