package kube

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/drift-gitops/drift/internal/object"
)

// ResourceFor returns the client for an object's resource, namespaced where it is.
func (c *Clients) ResourceFor(id object.ID) (dynamic.ResourceInterface, error) {
	mapping, err := c.Mapper.RESTMapping(id.GroupKind(), id.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource).Namespace(id.Namespace), nil
	}
	return c.Dynamic.Resource(mapping.Resource), nil
}

// Get reads a live object within timeout; nil, and no error, when it does not exist.
// A cached read may come from the API server's watch cache (resourceVersion=0), which
// spares etcd: the caller must detect a stale read (drift's dry runs compare the
// answer's resourceVersion with the one read, and read again). "Not found" is
// confirmed by a consistent read, so an object created a moment ago is never taken
// for missing.
func Get(ctx context.Context, res dynamic.ResourceInterface, name string, cached bool, timeout time.Duration) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rv := ""
	if cached {
		rv = "0"
	}
	live, err := res.Get(ctx, name, metav1.GetOptions{ResourceVersion: rv})
	if apierrors.IsNotFound(err) && cached {
		live, err = res.Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// AggregatedAPIs returns the group/versions an aggregated API server serves (an
// APIService with a service behind it), mapped to that service, read once per run.
// Credentials that may not list APIServices see none.
func (c *Clients) AggregatedAPIs() map[schema.GroupVersion]string {
	c.aggOnce.Do(func() {
		c.aggregated = map[schema.GroupVersion]string{}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		list, err := Retry(ctx, c, func(ctx context.Context) (*unstructured.UnstructuredList, error) {
			return c.Dynamic.Resource(apiServicesGVR).List(ctx, metav1.ListOptions{})
		})
		if err != nil {
			return
		}
		for _, item := range list.Items {
			svc, found, _ := unstructured.NestedMap(item.Object, "spec", "service")
			if !found || svc == nil {
				continue // served by the kube-apiserver itself
			}
			group, _, _ := unstructured.NestedString(item.Object, "spec", "group")
			version, _, _ := unstructured.NestedString(item.Object, "spec", "version")
			ns, _ := svc["namespace"].(string)
			name, _ := svc["name"].(string)
			c.aggregated[schema.GroupVersion{Group: group, Version: version}] = ns + "/" + name
		}
	})
	return c.aggregated
}
