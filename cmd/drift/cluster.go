package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/drift-gitops/drift/internal/dryrun"
	"github.com/drift-gitops/drift/internal/object"
)

// defaultRequestTimeout bounds each request when --request-timeout is not set.
const defaultRequestTimeout = 30 * time.Second

type cluster struct {
	clients        *dryrun.Clients
	namespace      string
	requestTimeout time.Duration
	// absent lists objects the server holds only so others can be previewed.
	absent map[object.Key]bool
	// seeded lists what an ephemeral server was loaded with.
	seeded map[object.Key]bool
	// stop releases the cluster (stops an ephemeral server); nil for live clusters.
	stop func()
	// credentials are the secrets of its client configuration, to scrub.
	credentials []string

	capsOnce    sync.Once
	kubeVersion string
	apiVersions []string
	capsErr     error
}

// capabilities returns the server's version and API versions, read once.
func (c *cluster) capabilities() (string, []string, error) {
	c.capsOnce.Do(func() { c.kubeVersion, c.apiVersions, c.capsErr = c.clients.Capabilities() })
	return c.kubeVersion, c.apiVersions, c.capsErr
}

// flagsFor returns kubectl's flags for one cluster of the run: the user's flags, with
// the target's kubeconfig and context where the command line does not set them.
func flagsFor(base *genericclioptions.ConfigFlags, key clusterKey) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.ClusterName = nil
	f.CacheDir, f.KubeConfig, f.AuthInfoName, f.Context, f.Namespace = base.CacheDir, base.KubeConfig, base.AuthInfoName, base.Context, base.Namespace
	f.APIServer, f.TLSServerName, f.Insecure = base.APIServer, base.TLSServerName, base.Insecure
	f.CertFile, f.KeyFile, f.CAFile, f.BearerToken = base.CertFile, base.KeyFile, base.CAFile, base.BearerToken
	f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra = base.Impersonate, base.ImpersonateUID, base.ImpersonateGroup, base.ImpersonateUserExtra
	f.Username, f.Password, f.Timeout, f.DisableCompression = base.Username, base.Password, base.Timeout, base.DisableCompression
	f.ProxyURL, f.WrapConfigFn = base.ProxyURL, base.WrapConfigFn
	if key.kubeconfig != "" {
		kc := expandHome(key.kubeconfig)
		f.KubeConfig = &kc
	}
	if key.context != "" {
		ctx := key.context
		f.Context = &ctx
	}
	return f
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// newCluster connects with kubectl's flags (--kubeconfig, --context, -n, --as, ...).
func newCluster(kube *genericclioptions.ConfigFlags, concurrency int) (*cluster, error) {
	noCluster := fmt.Errorf("no cluster configured: set KUBECONFIG or pass --kubeconfig and --context, or preview without a cluster with --cluster ephemeral --base REF")
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, noCluster
		}
		return nil, fmt.Errorf("failed to load the kubeconfig: %w", err)
	}
	// client-go falls back to http://localhost:8080 when nothing is configured; drift
	// says so instead of failing on every object.
	if raw, err := kube.ToRawKubeConfigLoader().RawConfig(); err == nil && len(raw.Clusters) == 0 &&
		(kube.APIServer == nil || *kube.APIServer == "") && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, noCluster
	}
	ns, _, err := kube.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("failed to read the default namespace from the kubeconfig: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = defaultRequestTimeout
	}
	clients, err := dryrun.NewClients(cfg, concurrency)
	if err != nil {
		return nil, err
	}
	if err := clients.Reachable(); err != nil {
		return nil, err
	}
	return &cluster{clients: clients, namespace: ns, requestTimeout: timeout, credentials: kubeCredentials(cfg)}, nil
}

func osGetenv(key string) string { return os.Getenv(key) }
