package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/plan"
)

// argoClusters reads the Argo CD cluster Secrets of namespace ns from the cluster key
// names, as an ApplicationSet's clusters generator reads them: a LIST of the Secrets
// labelled argocd.argoproj.io/secret-type=cluster. Only their name, server, project,
// labels and annotations are kept; the values of their config (the credentials Argo
// CD connects with) are given to the scrubber, so that no output ever holds them.
func (o *commonOptions) argoClusters(ctx context.Context, key plan.ClusterKey, ns string) ([]appset.Cluster, error) {
	cfg, err := dryrun.FlagsFor(o.kube, key.Kubeconfig, key.Context).ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	list, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: appset.SecretTypeLabel + "=" + appset.ClusterSecretType})
	if err != nil {
		return nil, fmt.Errorf("cannot list the cluster Secrets in namespace %s of %s (give drift list on Secrets there, or name the clusters in drift.yaml's argocdClusters): %w", ns, key, err)
	}
	var out []appset.Cluster
	for i := range list.Items {
		s := &list.Items[i]
		for _, v := range s.Data {
			o.scrub.AddSecretData(string(v))
		}
		for _, v := range s.StringData {
			o.scrub.AddSecretData(v)
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
		if err != nil {
			continue
		}
		obj["kind"] = "Secret"
		if c, ok := appset.ClusterOf(obj); ok {
			out = append(out, c)
		}
	}
	return out, nil
}
