package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultRequestTimeout bounds each request when --request-timeout is not set.
const DefaultRequestTimeout = 30 * time.Second

// Connection is a cluster drift previews on: its clients, the kubeconfig's default
// namespace and the bound of one request.
type Connection struct {
	Clients        *Clients
	Namespace      string
	RequestTimeout time.Duration
}

// FlagsFor returns kubectl's flags for one cluster of a run: the user's flags, with
// the kubeconfig and context a target names where they are set.
func FlagsFor(base *genericclioptions.ConfigFlags, kubeconfig, context string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.ClusterName = nil // drift's --cluster is set by the caller
	f.CacheDir, f.KubeConfig, f.AuthInfoName, f.Context, f.Namespace = base.CacheDir, base.KubeConfig, base.AuthInfoName, base.Context, base.Namespace
	f.APIServer, f.TLSServerName, f.Insecure = base.APIServer, base.TLSServerName, base.Insecure
	f.CertFile, f.KeyFile, f.CAFile, f.BearerToken = base.CertFile, base.KeyFile, base.CAFile, base.BearerToken
	f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra = base.Impersonate, base.ImpersonateUID, base.ImpersonateGroup, base.ImpersonateUserExtra
	f.Username, f.Password, f.Timeout, f.DisableCompression = base.Username, base.Password, base.Timeout, base.DisableCompression
	f.ProxyURL, f.WrapConfigFn = base.ProxyURL, base.WrapConfigFn
	if kubeconfig != "" {
		kc := expandHome(kubeconfig)
		f.KubeConfig = &kc
	}
	if context != "" {
		f.Context = &context
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

// Connect connects with kubectl's flags (--kubeconfig, --context, -n, --as, ...);
// ctx bounds every request to the cluster, connecting included. secret is told the
// credentials the client configuration holds before the first request, and every
// bearer token a request carries (an exec or auth-provider plugin's, which only
// client-go sees), so that nothing the server echoes of them is shown.
func Connect(ctx context.Context, kube *genericclioptions.ConfigFlags, concurrency int, secret func(...string)) (*Connection, error) {
	cfg, err := RESTConfig(kube)
	if err != nil {
		return nil, err
	}
	ns, _, err := kube.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("failed to read the default namespace from the kubeconfig: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	secret(credentials(cfg)...)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return bearerSeen{next: next, secret: secret} })
	clients, err := NewClientsWithin(ctx, cfg, concurrency)
	if err != nil {
		return nil, err
	}
	if err := clients.Reachable(ctx); err != nil {
		return nil, err
	}
	return &Connection{Clients: clients, Namespace: ns, RequestTimeout: timeout}, nil
}

// ErrNoCluster is the error of a run that needs a cluster when none is configured.
var ErrNoCluster = errors.New("no cluster configured: set KUBECONFIG or pass --kubeconfig and --context, or preview without a cluster with --cluster ephemeral --base REF")

// RESTConfig is the client configuration kubectl's flags give, or ErrNoCluster when
// they name no cluster (client-go would fall back to http://localhost:8080, and
// every request would fail with connection refused), or an error naming a
// kubeconfig file that is not one, quoting nothing of it.
func RESTConfig(kube *genericclioptions.ConfigFlags) (*rest.Config, error) {
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, ErrNoCluster
		}
		if invalid := invalidKubeconfig(kube); invalid != nil {
			return nil, invalid
		}
		return nil, fmt.Errorf("failed to load the kubeconfig: %w", err)
	}
	if raw, err := kube.ToRawKubeConfigLoader().RawConfig(); err == nil && len(raw.Clusters) == 0 &&
		(kube.APIServer == nil || *kube.APIServer == "") && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return nil, ErrNoCluster
	}
	return cfg, nil
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

// maxCredentialFile bounds what is read of a token or key file for scrubbing.
const maxCredentialFile = 64 << 10

// credentials are the secrets a cluster's client configuration holds: bearer token
// (inline or its file), password, client key, and an auth provider's tokens. Tokens
// an exec plugin returns are known only from the requests (bearerSeen).
func credentials(cfg *rest.Config) []string {
	out := []string{cfg.BearerToken, cfg.Password, string(cfg.KeyData)}
	for _, f := range []string{cfg.BearerTokenFile, cfg.KeyFile} {
		if f == "" {
			continue
		}
		if file, err := os.Open(f); err == nil {
			b, _ := io.ReadAll(io.LimitReader(file, maxCredentialFile))
			_ = file.Close()
			out = append(out, string(b))
		}
	}
	if cfg.AuthProvider != nil {
		for _, v := range cfg.AuthProvider.Config {
			out = append(out, v)
		}
	}
	return out
}

// bearerSeen tells secret the bearer token of every request it passes on: client-go
// sets the header of an exec or auth-provider plugin's token outside drift's view, in
// a wrapper around this one.
type bearerSeen struct {
	next   http.RoundTripper
	secret func(...string)
}

func (b bearerSeen) RoundTrip(req *http.Request) (*http.Response, error) {
	if token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		b.secret(token)
	}
	return b.next.RoundTrip(req)
}
