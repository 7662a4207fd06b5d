package appset

import (
	"errors"
	"fmt"
)

// Levels of a generator: top-level, a matrix or merge's child, a nested matrix or
// merge's child (which can be neither).
const (
	levelTop = iota
	levelChild
	levelNested
)

func (e *expander) renderer() renderer {
	return renderer{goTemplate: e.spec.GoTemplate, options: e.spec.GoTemplateOptions}
}

// transform is the controller's generators.Transform for one kind of a generator:
// its parameter sets, the generator first interpolated with genParams when there
// are any (a matrix's second child), then filtered by the generator's selector
// over each set's flattened parameters.
func (e *expander) transform(gen map[string]any, kind string, genParams map[string]any, level int) ([]map[string]any, error) {
	sel, err := readParamSelector(gen["selector"])
	if err != nil {
		return nil, fmt.Errorf("error parsing label selector: %w", err)
	}
	spec := gen
	if len(genParams) != 0 {
		if spec, err = e.renderer().interpolateGenerator(gen, genParams); err != nil {
			return nil, fmt.Errorf("failed to replace parameters in generator: %w", err)
		}
	}
	params, err := e.params(kind, spec[kind], level)
	if err != nil || sel == nil {
		return params, err
	}
	var out []map[string]any
	for _, p := range params {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		if sel.matches(flattenParameters(p)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// params are the parameter sets of one generator kind.
func (e *expander) params(kind string, spec any, level int) ([]map[string]any, error) {
	switch kind {
	case "list":
		return e.listParams(spec)
	case "clusters":
		return e.clusterParams(spec)
	case "git":
		return e.gitParams(spec)
	case "matrix":
		return e.matrixParams(spec, level)
	case "merge":
		return e.mergeParams(spec, level)
	case "pullRequest":
		return nil, skipf("reads a pull-request API drift does not call")
	case "scmProvider":
		return nil, skipf("reads an SCM provider's API drift does not call")
	case "clusterDecisionResource":
		return nil, skipf("reads a cluster's decision resources, which drift does not")
	case "plugin":
		return nil, skipf("calls a plugin's service, which drift does not")
	}
	return nil, fmt.Errorf("unknown generator %s", kind)
}

// children reads a matrix or merge's child generators.
func children(spec map[string]any, what string) ([]map[string]any, error) {
	raw, ok := spec["generators"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s.generators is not a list", what)
	}
	out := make([]map[string]any, 0, len(list))
	for i, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s child %d is not an object", what, i+1)
		}
		out = append(out, m)
	}
	return out, nil
}

// child is the parameter sets of a matrix or merge's child generator, which must
// name exactly one kind: at the second level any, at the third no matrix or merge
// (the controller reads them as terminal generators and ignores those).
func (e *expander) child(gen map[string]any, i int, genParams map[string]any, level int) ([]map[string]any, error) {
	kinds := topKinds
	if level >= levelNested {
		kinds = terminalKinds
	}
	names := kindsOf(gen, kinds)
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("child %d: child generator generated no parameters", i+1)
	case len(names) > 1:
		return nil, fmt.Errorf("child %d: found more than one generator in matrix.Generators", i+1)
	}
	params, err := e.transform(gen, names[0], genParams, level)
	var s *skip
	if errors.As(err, &s) {
		return nil, skipf("child %d (%s): %s", i+1, names[0], s.reason)
	}
	if err != nil {
		return nil, fmt.Errorf("child %d (%s): %w", i+1, names[0], err)
	}
	return params, nil
}
