// Package testenv starts real kube-apiserver + etcd pairs through envtest for tests.
// The binaries come from KUBEBUILDER_ASSETS, which make test sets with
// hack/envtest-assets.sh. Without it, a test that needs a server is skipped, saying
// how to run it, except under CI=true, where it fails: a CI run never passes by
// skipping what it was meant to check.
package testenv

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// missing says why no server can be started here, and how to get one ("" when one can).
func missing() string {
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return ""
	}
	return "KUBEBUILDER_ASSETS is not set: run the tests with make test, or export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)"
}

// inCI reports whether the tests run in CI (CI=true), where a test that needs a
// server fails without one instead of being skipped.
func inCI() bool { return os.Getenv("CI") == "true" }

// Start starts an API server. Call Stop when done.
func Start() (*Env, error) {
	if why := missing(); why != "" {
		return nil, fmt.Errorf("%s", why)
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

// Shared is the one API server the tests of a package share, started by the first
// test that asks for it (Env), so that the package's tests that need no server run
// without one. Its zero value is ready to use; the package's TestMain stops it
// (Run).
type Shared struct {
	once sync.Once
	env  *Env
	err  error
}

// Env returns the shared server, starting it on first use. Without the binaries the
// test is skipped with what to do (failed under CI=true); a server that does not
// start fails the test.
func (s *Shared) Env(t testing.TB) *Env {
	t.Helper()
	Require(t)
	s.once.Do(func() { s.env, s.err = Start() })
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.env
}

// StartFor starts a server of the test's own, stopped when the test ends; without
// the binaries the test is skipped with what to do (failed under CI=true).
func StartFor(t testing.TB) *Env {
	t.Helper()
	Require(t)
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	return e
}

// Require skips t, or fails it under CI=true, when no server can be started: for a
// test that starts drift's own ephemeral server.
func Require(t testing.TB) {
	t.Helper()
	if why := missing(); why != "" {
		if inCI() {
			t.Fatalf("this test needs a real API server and CI=true: %s", why)
		}
		t.Skipf("this test needs a real API server: %s", why)
	}
}

// Stop stops the server if a test started it.
func (s *Shared) Stop() error {
	if s.env == nil {
		return nil
	}
	return s.env.Stop()
}

// Run is a TestMain body for a package whose tests share s: it runs the tests, stops
// the server if one was started and returns the exit code for os.Exit.
func Run(m *testing.M, s *Shared) int {
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the test API server:", err)
	}
	return code
}

// Main is a TestMain body for packages whose tests use one server through a package
// variable: it starts the server, hands it to set, runs the tests, stops it and
// returns the exit code for os.Exit. Without the binaries only the tests named in
// serverless run (set is not called), and the message says what to do and what was
// skipped; under CI=true the package fails instead.
func Main(m *testing.M, set func(*Env), serverless ...string) int {
	if why := missing(); why != "" {
		if inCI() {
			fmt.Fprintf(os.Stderr, "the tests of this package need a real API server and CI=true: %s\n", why)
			return 1
		}
		fmt.Fprintf(os.Stderr, "skipping the tests of this package that need a real API server (all but %d): %s\n", len(serverless), why)
		flag.Parse() // -run given on the command line must not bring them back
		only := "^$"
		if len(serverless) > 0 {
			only = "^(" + strings.Join(serverless, "|") + ")$"
		}
		if err := flag.Set("test.run", only); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}
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
