package app

import (
	"context"
	"encoding/base64"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
)

// argoClusters reads the Argo CD cluster Secrets of namespace ns from the cluster key
// names (with diff's --cluster), as an ApplicationSet's clusters generator reads
// them: a LIST of the Secrets labelled argocd.argoproj.io/secret-type=cluster. Only
// their name, server, project, labels and annotations are kept; the values of their
// config (the credentials Argo CD connects with) are given to the scrubber, so that
// no output ever holds them.
func (o *Run) argoClusters(ctx context.Context, key plan.ClusterKey, cluster, ns string) ([]appset.Cluster, error) {
	conn, err := o.connect(ctx, key, cluster)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	c := conn.Clients
	list, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
		return c.Dynamic.Resource(secretsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: appset.SecretTypeLabel + "=" + appset.ClusterSecretType})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list the cluster Secrets in namespace %s of %s (give drift list on Secrets there, or name the clusters in drift.yaml's argocdClusters): %w", ns, key, err)
	}
	var out []appset.Cluster
	for i := range list.Items {
		obj := list.Items[i].Object
		obj["kind"] = "Secret"
		o.scrubSecretData(obj)
		if c, ok := appset.ClusterOf(obj); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

var (
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// scrubSecretData gives the scrubber every value of a Secret's data (decoded) and
// stringData, as the API server sends them.
func (o *Run) scrubSecretData(obj map[string]any) {
	data, _, _ := unstructured.NestedMap(obj, "data")
	for _, v := range data {
		if s, ok := v.(string); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				o.scrub.AddSecretData(string(b))
			}
		}
	}
	strs, _, _ := unstructured.NestedMap(obj, "stringData")
	for _, v := range strs {
		if s, ok := v.(string); ok {
			o.scrub.AddSecretData(s)
		}
	}
}

// liveObject reads a ConfigMap or Secret discovery needs from the cluster key names
// (a Flux substituteFrom or valuesFrom the repository does not hold), or a Flux
// source: nil, nil when it is not there. A Secret's values are given to the
// scrubber.
func (o *Run) liveObject(ctx context.Context, key plan.ClusterKey, cluster, kind, ns, name string) (*unstructured.Unstructured, error) {
	var gvr schema.GroupVersionResource
	switch kind {
	case "ConfigMap":
		gvr = configMapsGVR
	case "Secret":
		gvr = secretsGVR
	default:
		return o.liveSource(ctx, key, cluster, kind, ns, name)
	}
	conn, err := o.connect(ctx, key, cluster)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	c := conn.Clients
	u, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
		return c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s/%s from %s (give drift get on it, or add it to the repository): %w", kind, ns, name, key, err)
	}
	if kind == "Secret" {
		o.scrubSecretData(u.Object)
	}
	u.SetKind(kind)
	u.SetAPIVersion("v1")
	return u, nil
}

// fluxSources are the Flux source kinds drift reads from a cluster: their resource,
// and the API versions they are read in, newest first.
var fluxSources = map[string]struct {
	resource string
	versions []string
}{
	"GitRepository":  {"gitrepositories", []string{"v1", "v1beta2"}},
	"OCIRepository":  {"ocirepositories", []string{"v1", "v1beta2"}},
	"HelmRepository": {"helmrepositories", []string{"v1", "v1beta2"}},
}

// liveSource reads a Flux source from the cluster key names (with diff's --cluster),
// in the newest version the cluster serves; nil, nil when it is not there (or Flux
// is not installed).
func (o *Run) liveSource(ctx context.Context, key plan.ClusterKey, cluster, kind, ns, name string) (*unstructured.Unstructured, error) {
	src, ok := fluxSources[kind]
	if !ok {
		return nil, fmt.Errorf("drift does not read %s objects from the cluster", kind)
	}
	conn, err := o.connect(ctx, key, cluster)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	c := conn.Clients
	for _, v := range src.versions {
		gvr := schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: v, Resource: src.resource}
		u, err := kube.Retry(ctx, c, func(ctx context.Context) (*unstructured.Unstructured, error) {
			return c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		})
		switch {
		case err == nil:
			return u, nil
		case apierrors.IsNotFound(err):
			if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil && status.Status().Details.Name == name {
				return nil, nil // the kind is served, the object is not there
			}
			continue // this version is not served
		default:
			return nil, fmt.Errorf("cannot read %s %s/%s from %s: %w", kind, ns, name, key, err)
		}
	}
	return nil, nil
}
