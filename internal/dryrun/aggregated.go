package dryrun

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/reason"
)

var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// aggregatedAPIs returns the group/versions an aggregated API server serves (an
// APIService with a service behind it), mapped to that service, read once per run.
// Credentials that may not list APIServices see none.
func (c *Clients) aggregatedAPIs() map[schema.GroupVersion]string {
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

func aggregatedError(gv schema.GroupVersion, service string) *Message {
	return &Message{Reason: reason.AggregatedAPI, Message: fmt.Sprintf(
		"%s is served by an aggregated API server (service %s), not by the kube-apiserver: such servers have been seen to persist dry-run writes, so drift did not send it. If this server honours dryRun, set dryRunAggregatedAPIs: true on the target in drift.yaml",
		gv.String(), service)}
}
