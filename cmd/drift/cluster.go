package main

import (
	"fmt"
	"os"
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
	return &cluster{clients: clients, namespace: ns, requestTimeout: timeout}, nil
}

func osGetenv(key string) string { return os.Getenv(key) }
