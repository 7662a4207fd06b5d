package fidelity

import (
	"context"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/helm"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/kube"
)

// helmApplier installs the base as a chart with the Helm SDK's install action, and
// the head with its upgrade action, as helm install and helm upgrade do.
func helmApplier() realApplier {
	const release = "shop"
	return realApplier{
		profile: "helm",
		owner:   applier.Owner{Name: release},
		apply: func(t *testing.T, ns, step string, objs []*unstructured.Unstructured) {
			ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "shop", Version: "1.0.0"}}
			for i, o := range objs {
				data, err := yaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				ch.Templates = append(ch.Templates, &chart.File{Name: fmt.Sprintf("templates/%02d.yaml", i), Data: data})
			}
			cfg := helmConfig(t, ns)
			if step == "base" {
				in := action.NewInstall(cfg)
				in.ReleaseName, in.Namespace = release, ns
				if _, err := in.Run(ch, nil); err != nil {
					t.Fatalf("helm install: %v", err)
				}
				return
			}
			up := action.NewUpgrade(cfg)
			up.Namespace = ns
			if _, err := up.Run(release, ch, nil); err != nil {
				t.Fatalf("helm upgrade: %v", err)
			}
		},
		options: func(t *testing.T, ns string, opts *dryrun.Options) {
			clients, err := kube.NewClients(env.Config, 1)
			if err != nil {
				t.Fatal(err)
			}
			secrets, err := clients.Secrets(context.Background(), ns)
			if err != nil {
				t.Fatal(err)
			}
			rel, err := helm.ReadRelease(secrets, clients.Mapper, ns, release)
			if err != nil {
				t.Fatal(err)
			}
			opts.Applier = helm.Upgrading(rel)
			opts.Owner.Namespace = ns
		},
	}
}

// helmConfig is the Helm SDK's own configuration against the test API server,
// writing as the helm CLI does.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	helmkube.ManagedFieldsManager = helm.FieldManager
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.Kubeconfig
	flags.Namespace = &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestFidelityHelm(t *testing.T) { runCell(t, helmApplier()) }
