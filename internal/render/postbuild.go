package render

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/envsubst"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/yaml"
)

// Flux's postBuild substitution, as kustomize-controller runs it on each resource of
// the build (fluxcd/pkg/kustomize SubstituteVariables, not strict): variable names must
// be shell names; a value's newlines are dropped; a resource labelled or annotated
// kustomize.toolkit.fluxcd.io/substitute: disabled is left alone; the resource's YAML,
// as kustomize writes it (quoting as written), goes through Flux's envsubst, where an
// unset variable is empty, ${var:=default} falls back, and $${var} is a literal
// ${var}; nothing is substituted without variables.

const substituteKey = "kustomize.toolkit.fluxcd.io/substitute"

var shellName = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// checkVariables says which variable names Flux refuses (nil: none).
func checkVariables(vars map[string]string) error {
	var bad []string
	for name := range vars {
		if !shellName.MatchString(name) {
			bad = append(bad, fmt.Sprintf("%q", name))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("postBuild variable names %s are invalid: Flux takes names matching %s and refuses the build", strings.Join(bad, ", "), shellName)
}

// substituted is a resource after substitution, as JSON; ok is false when the
// resource is left alone (substitution disabled on it).
func substituted(r *resource.Resource, vars map[string]string) (data []byte, ok bool, err error) {
	if r.GetLabels()[substituteKey] == "disabled" || r.GetAnnotations()[substituteKey] == "disabled" {
		return nil, false, nil
	}
	in, err := r.AsYAML()
	if err != nil {
		return nil, false, err
	}
	out, err := envsubst.Eval(string(in), func(name string) (string, bool) {
		return strings.ReplaceAll(vars[name], "\n", ""), true
	})
	if err != nil {
		// envsubst's errors quote the template, never a variable's value.
		return nil, false, fmt.Errorf("variable substitution failed: %v", err)
	}
	data, err = yaml.YAMLToJSON([]byte(out))
	if err != nil {
		return nil, false, fmt.Errorf("the substituted resource is not YAML (a value that breaks the document?): %v", err)
	}
	return data, true, nil
}
