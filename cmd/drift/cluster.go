package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
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
	// lookupKey names the cluster to the render cache when a Helm target's lookup
	// reads it (the helm applier); "" until then.
	lookupKey string

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

// newCluster connects with kubectl's flags (--kubeconfig, --context, -n, --as, ...);
// ctx bounds every request to the cluster, connecting included. secret is told the
// credentials the client configuration holds before the first request, and every
// bearer token a request carries (an exec or auth-provider plugin's, which only
// client-go sees), so that nothing the server echoes of them is shown.
func newCluster(ctx context.Context, kube *genericclioptions.ConfigFlags, concurrency int, secret func(...string)) (*cluster, error) {
	noCluster := fmt.Errorf("no cluster configured: set KUBECONFIG or pass --kubeconfig and --context, or preview without a cluster with --cluster ephemeral --base REF")
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, noCluster
		}
		if invalid := invalidKubeconfig(kube); invalid != nil {
			return nil, invalid
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
	secret(kubeCredentials(cfg)...)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return bearerSeen{next: next, secret: secret} })
	clients, err := dryrun.NewClientsWithin(ctx, cfg, concurrency)
	if err != nil {
		return nil, err
	}
	if err := clients.Reachable(ctx); err != nil {
		return nil, err
	}
	return &cluster{clients: clients, namespace: ns, requestTimeout: timeout}, nil
}

// invalidKubeconfig names the kubeconfig file that does not decode, without client-go's
// decoding error: it quotes the file's values ("cannot unmarshal !!str `…`"), and the
// file may be anything on the machine a target's kubeconfig names. The line number is
// kept; nothing else of the error is.
func invalidKubeconfig(kube *genericclioptions.ConfigFlags) error {
	for _, file := range kube.ToRawKubeConfigLoader().ConfigAccess().GetLoadingPrecedence() {
		data, err := os.ReadFile(file)
		if err != nil {
			continue // client-go's own error says which file is missing, and quotes nothing
		}
		if _, err := clientcmd.Load(data); err != nil {
			where := ""
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				where = " (line " + m[1] + ")"
			}
			return fmt.Errorf("%s is not a valid kubeconfig%s: point --kubeconfig or KUBECONFIG at a kubeconfig file", file, where)
		}
	}
	return nil
}

var yamlLine = regexp.MustCompile(`\bline ([0-9]+)`)

// runTimeout is the cause of a run's end at --timeout, so that the messages of whatever
// it interrupted say so; it is a context.DeadlineExceeded.
type runTimeout time.Duration

func (d runTimeout) Error() string { return fmt.Sprintf("timed out after %s", time.Duration(d)) }

func (runTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

func osGetenv(key string) string { return os.Getenv(key) }
