package app

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/appset"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/plan"
)

// argoClusters reads the Argo CD cluster Secrets of namespace ns from the cluster key
// names, as an ApplicationSet's clusters generator reads them: a LIST of the Secrets
// labelled argocd.argoproj.io/secret-type=cluster. Only their name, server, project,
// labels and annotations are kept; the values of their config (the credentials Argo
// CD connects with) are given to the scrubber, so that no output ever holds them.
func (o *Run) argoClusters(ctx context.Context, key plan.ClusterKey, ns string) ([]appset.Cluster, error) {
	cs, err := o.liveClient(key)
	if err != nil {
		return nil, err
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

// liveObject reads a ConfigMap or Secret discovery needs from the cluster key names
// (a Flux substituteFrom or valuesFrom the repository does not hold): nil, nil when
// it is not there. A Secret's values are given to the scrubber.
func (o *Run) liveObject(ctx context.Context, key plan.ClusterKey, kind, ns, name string) (*unstructured.Unstructured, error) {
	cs, err := o.liveClient(key)
	if err != nil {
		return nil, err
	}
	var obj runtime.Object
	switch kind {
	case "ConfigMap":
		obj, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	case "Secret":
		var s *corev1.Secret
		if s, err = cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			for _, v := range s.Data {
				o.scrub.AddSecretData(string(v))
			}
			obj = s
		}
	default:
		return o.liveSource(ctx, key, kind, ns, name)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s %s/%s from %s (give drift get on it, or add it to the repository): %w", kind, ns, name, key, err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetKind(kind)
	u.SetAPIVersion("v1")
	return u, nil
}

// liveClient is a client of the cluster key names, made once per cluster.
func (o *Run) liveClient(key plan.ClusterKey) (kubernetes.Interface, error) {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	if cs, ok := o.liveClients[key]; ok {
		return cs, nil
	}
	cfg, err := kube.RESTConfig(kube.FlagsFor(o.cfg.Kube, key.Kubeconfig, key.Context))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	if o.liveClients == nil {
		o.liveClients = map[plan.ClusterKey]kubernetes.Interface{}
	}
	o.liveClients[key] = cs
	return cs, nil
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

// liveSource reads a Flux source from the cluster key names, in the newest version
// the cluster serves; nil, nil when it is not there (or Flux is not installed).
func (o *Run) liveSource(ctx context.Context, key plan.ClusterKey, kind, ns, name string) (*unstructured.Unstructured, error) {
	src, ok := fluxSources[kind]
	if !ok {
		return nil, fmt.Errorf("drift does not read %s objects from the cluster", kind)
	}
	cfg, err := kube.RESTConfig(kube.FlagsFor(o.cfg.Kube, key.Kubeconfig, key.Context))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", key, err)
	}
	for _, v := range src.versions {
		u, err := dyn.Resource(schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: v, Resource: src.resource}).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
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
