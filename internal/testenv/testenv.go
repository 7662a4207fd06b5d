// Package testenv starts real kube-apiserver + etcd pairs through envtest for tests.
// The binaries come from KUBEBUILDER_ASSETS, which make test sets with
// hack/envtest-assets.sh.
package testenv

import (
	"fmt"
	"io"
	"log"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Env is a running API server.
type Env struct {
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the server (admin user).
	Kubeconfig string
	env        *envtest.Environment
	dir        string
}

// Start starts an API server. Call Stop when done.
func Start() (*Env, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with make test, or export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)")
	}
	env := &envtest.Environment{}
	// envtest turns the ServiceAccount admission plugin off; a real cluster runs it
	// (it refuses a Pod whose service account does not exist), so the tests do too.
	// The clusters' "default" service accounts do not exist here (no controller
	// manager creates them): a test Pod names one it creates.
	env.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("failed to start the test API server: %w", err)
	}
	dir, err := os.MkdirTemp("", "drift-testenv-")
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, env.KubeConfig, 0o600); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Kubeconfig: path, env: env, dir: dir}, nil
}

// Stop stops the API server and removes its files.
func (e *Env) Stop() error {
	err := e.env.Stop()
	_ = os.RemoveAll(e.dir)
	return err
}

// Main is a TestMain body for packages that share one API server: it starts the server,
// hands it to set, runs the tests, stops it and returns the exit code for os.Exit.
func Main(m *testing.M, set func(*Env)) int {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	set(e)
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test API server:", err)
	}
	return code
}

// AddUser provisions a user with the given groups (no permissions of its own) and
// returns a kubeconfig file for it.
func (e *Env) AddUser(name string, groups ...string) (string, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return "", fmt.Errorf("failed to add user %s: %w", name, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.dir, "kubeconfig-"+name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// ReverseProxy forwards plain-HTTP requests to the API server with the admin
// credentials, so a test can put a proxy (counting, racing, injecting faults) in front
// of the server and point clients at it without any authentication.
func (e *Env) ReverseProxy() (*httputil.ReverseProxy, error) {
	transport, err := rest.TransportFor(e.Config)
	if err != nil {
		return nil, err
	}
	upstream, err := url.Parse(e.Config.Host)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = transport
	rp.ErrorLog = log.New(io.Discard, "", 0) // a proxy that drops connections on purpose is not news
	return rp, nil
}
