package helm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/object"
)

// Release is the deployed revision of a Helm release: what `helm upgrade` starts
// from (its "current" resource list, pkg/action/upgrade.go).
type Release struct {
	Name      string
	Namespace string
	Revision  int
	// NextRevision is the revision `helm upgrade` creates: one past the last in the
	// release's history, failed ones included. Render the chart with it
	// (render.HelmOptions.Revision).
	NextRevision int
	// Objects are the objects of the revision's manifest as Helm builds them: lists
	// flattened, namespaced objects without a namespace in the release namespace, and
	// without the labels and annotations Helm adds when it applies.
	Objects []*unstructured.Unstructured
}

// ReadRelease reads the deployed revision of release name in namespace from its
// release Secret (sh.helm.release.v1.<name>.v<N>, labels owner=helm, status=deployed),
// decoded by Helm's own Secret storage driver. It returns nil and no error when the
// release has no deployed revision: `helm upgrade --install` then installs. mapper
// tells namespaced kinds, as Helm's resource builder does. secrets are the release
// namespace's Secrets (kube.Clients.Secrets); reading needs `list` on them.
func ReadRelease(secrets corev1client.SecretInterface, mapper meta.RESTMapper, namespace, name string) (*Release, error) {
	store := storage.Init(driver.NewSecrets(secrets))
	rel, err := store.Deployed(name)
	if errors.Is(err, driver.ErrNoDeployedReleases) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read Helm release %s in namespace %s from its release Secrets (sh.helm.release.v1.%s.v*): %w; drift needs list on secrets there", name, namespace, name, err)
	}
	objs, err := decodeManifest(rel.Manifest)
	if err != nil {
		return nil, fmt.Errorf("Helm release %s revision %d in namespace %s: the stored manifest cannot be read: %w", name, rel.Version, namespace, err)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			continue
		}
		m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
		if err != nil {
			// A kind the cluster no longer serves: Helm's upgrade fails on it too
			// ("current release manifest contains removed kubernetes api(s)").
			return nil, fmt.Errorf("Helm release %s revision %d in namespace %s holds %s %s, a kind the cluster does not serve: %w", name, rel.Version, namespace, o.GetAPIVersion(), o.GetKind(), err)
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			o.SetNamespace(namespace)
		}
	}
	next := rel.Version + 1
	history, err := secrets.List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		return nil, fmt.Errorf("failed to list the history of Helm release %s in namespace %s: %w", name, namespace, err)
	}
	for _, s := range history.Items {
		if v, err := strconv.Atoi(s.Labels["version"]); err == nil && v >= next {
			next = v + 1
		}
	}
	return &Release{Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Version, NextRevision: next, Objects: objs}, nil
}

// decodeManifest reads a release manifest as Helm's kube client Build does: the
// stream split by the Kubernetes YAML reader, each document converted by sigs.k8s.io/yaml,
// lists flattened.
func decodeManifest(manifest string) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewBufferString(manifest)))
	var objs []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		data, err := reader.Read()
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if s := string(bytes.TrimSpace(js)); s == "null" || s == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if u.IsList() {
			err := u.EachListItem(func(o runtime.Object) error {
				objs = append(objs, o.(*unstructured.Unstructured))
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", doc, err)
			}
			continue
		}
		objs = append(objs, u)
	}
}

// Previous returns the release's copy of the object id names (matched as Helm does,
// on group, kind, namespace and name), or nil when the release does not have it.
func (r *Release) Previous(id object.ID) *unstructured.Unstructured {
	if r == nil {
		return nil
	}
	for _, o := range r.Objects {
		if sameObject(object.IDOf(o), id) {
			return o
		}
	}
	return nil
}

// Dropped returns the release's objects that rendered (identities with namespaces
// defaulted) no longer has, in the release's order: `helm upgrade` deletes them,
// except those whose live copy carries helm.sh/resource-policy: keep (Keeps).
func (r *Release) Dropped(rendered []object.ID) []*unstructured.Unstructured {
	if r == nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, o := range r.Objects {
		id := object.IDOf(o)
		if !slices.ContainsFunc(rendered, func(n object.ID) bool { return sameObject(id, n) }) {
			out = append(out, o)
		}
	}
	return out
}

// Inventory names the release as what records its objects: "Helm release
// shop/web revision 3".
func (r *Release) Inventory() string {
	return fmt.Sprintf("Helm release %s/%s revision %d", r.Namespace, r.Name, r.Revision)
}

// Source names where the release's copy of an object comes from: "release web
// revision 3".
func (r *Release) Source() string { return fmt.Sprintf("release %s revision %d", r.Name, r.Revision) }

// sameObject is Helm's isMatchingInfo: the version does not count.
func sameObject(a, b object.ID) bool {
	return a.Group == b.Group && a.Kind == b.Kind && a.Namespace == b.Namespace && a.Name == b.Name
}
