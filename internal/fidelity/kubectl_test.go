package fidelity

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kubectlApplier applies with the real kubectl binary.
func kubectlApplier(profile string, flags ...string) realApplier {
	return realApplier{
		profile:    profile,
		serverSide: len(flags) > 0,
		apply: func(t *testing.T, ns, step string, objs []*unstructured.Unstructured) {
			var docs []string
			for _, o := range objs {
				data, err := yaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				docs = append(docs, string(data))
			}
			kubectl(t, append(append([]string{"apply", "-f", "-"}, flags...), "<<"+strings.Join(docs, "\n---\n"))...)
		},
	}
}

func TestFidelityKubectl(t *testing.T) { runCell(t, kubectlApplier("kubectl")) }

func TestFidelityKubectlServerSide(t *testing.T) {
	runCell(t, kubectlApplier("kubectl-server-side", "--server-side"))
}
