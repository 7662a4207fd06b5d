package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// typed are the clients other than the dynamic one, built on first use from the
// same configuration, client-go's own retries off (Retry is the policy).
type typed struct {
	once sync.Once
	core corev1client.CoreV1Interface
	raw  rest.Interface
	err  error
}

func (c *Clients) typedClients() (*typed, error) {
	c.typed.once.Do(func() {
		core := rest.CopyConfig(c.Config)
		core.GroupVersion, core.APIPath = &corev1.SchemeGroupVersion, "/api"
		core.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
		rc, err := rest.RESTClientFor(core)
		if err != nil {
			c.typed.err = fmt.Errorf("failed to create a client for %s: %w", c.Host, err)
			return
		}
		c.typed.core = corev1client.New(noClientRetries{rc})
		raw := rest.CopyConfig(c.Config)
		raw.GroupVersion, raw.APIPath = &schema.GroupVersion{}, "/this-value-is-never-sent"
		raw.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
		urc, err := rest.UnversionedRESTClientFor(raw)
		if err != nil {
			c.typed.err = fmt.Errorf("failed to create a client for %s: %w", c.Host, err)
			return
		}
		c.typed.raw = noClientRetries{urc}
	})
	return &c.typed, c.typed.err
}

// Secrets are the Secrets of namespace ns as client-go's SecretInterface, for a
// library that reads them through one (Helm's release storage): each Get and List
// is sent through Retry with ctx, whatever context the library passes (Helm's
// storage passes none). Writes are refused: drift changes nothing in a cluster.
func (c *Clients) Secrets(ctx context.Context, ns string) (corev1client.SecretInterface, error) {
	t, err := c.typedClients()
	if err != nil {
		return nil, err
	}
	return readOnlySecrets{SecretInterface: t.core.Secrets(ns), ctx: ctx, c: c}, nil
}

// ErrReadOnly is a write asked of a client drift only reads with.
var ErrReadOnly = errors.New("drift does not write to the cluster")

type readOnlySecrets struct {
	corev1client.SecretInterface
	ctx context.Context
	c   *Clients
}

func (s readOnlySecrets) Get(_ context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	return Retry(s.ctx, s.c, func(ctx context.Context) (*corev1.Secret, error) { return s.SecretInterface.Get(ctx, name, opts) })
}

func (s readOnlySecrets) List(_ context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	return Retry(s.ctx, s.c, func(ctx context.Context) (*corev1.SecretList, error) { return s.SecretInterface.List(ctx, opts) })
}

func (readOnlySecrets) Create(context.Context, *corev1.Secret, metav1.CreateOptions) (*corev1.Secret, error) {
	return nil, ErrReadOnly
}

func (readOnlySecrets) Update(context.Context, *corev1.Secret, metav1.UpdateOptions) (*corev1.Secret, error) {
	return nil, ErrReadOnly
}

func (readOnlySecrets) Delete(context.Context, string, metav1.DeleteOptions) error {
	return ErrReadOnly
}

func (readOnlySecrets) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return ErrReadOnly
}

func (readOnlySecrets) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*corev1.Secret, error) {
	return nil, ErrReadOnly
}

func (readOnlySecrets) Apply(context.Context, *corev1ac.SecretApplyConfiguration, metav1.ApplyOptions) (*corev1.Secret, error) {
	return nil, ErrReadOnly
}

// ListMetadata is one page of the objects of a resource in every namespace,
// metadata only (what client-go's metadata client reads), sent through Retry.
func (c *Clients) ListMetadata(ctx context.Context, gvr schema.GroupVersionResource, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	t, err := c.typedClients()
	if err != nil {
		return nil, err
	}
	path := []string{"/apis", gvr.Group, gvr.Version, gvr.Resource}
	if gvr.Group == "" {
		path = []string{"/api", gvr.Version, gvr.Resource}
	}
	return Retry(ctx, c, func(ctx context.Context) (*metav1.PartialObjectMetadataList, error) {
		raw, err := t.raw.Get().AbsPath(path...).
			SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json").
			VersionedParams(&opts, metav1.ParameterCodec).
			Do(ctx).Raw()
		if err != nil {
			return nil, err
		}
		var list metav1.PartialObjectMetadataList
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("the server's list of %s is not a PartialObjectMetadataList: %w", gvr.GroupResource(), err)
		}
		list.TypeMeta = metav1.TypeMeta{}
		return &list, nil
	})
}
