// Package ephemeral starts a throwaway kube-apiserver + etcd on loopback, in a
// temporary directory removed when it stops: a real API server that validates and
// defaults objects, for previews without a cluster.
package ephemeral

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// KubeVersion is the kube-apiserver version drift setup installs.
const KubeVersion = "v1.36.3"

// AssetsEnv is the envtest convention for the directory holding the binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Server is a running ephemeral API server.
type Server struct {
	Config *rest.Config
	env    *envtest.Environment
}

// AssetsDir finds the directory with etcd and kube-apiserver: KUBEBUILDER_ASSETS,
// else drift's cache directory. It says what to do when they are missing.
func AssetsDir(getenv func(string) string) (string, error) {
	dir := getenv(AssetsEnv)
	from := AssetsEnv
	if dir == "" {
		dir = CacheDir(getenv)
		from = "drift's cache"
	}
	var missing []string
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the ephemeral API server needs %v, not found in %s (%s): run drift setup, or set %s to a directory with etcd and kube-apiserver", missing, dir, from, AssetsEnv)
	}
	return dir, nil
}

// CacheDir is where drift setup installs the binaries.
func CacheDir(getenv func(string) string) string {
	base := getenv("DRIFT_CACHE_DIR")
	if base == "" {
		if xdg := getenv("XDG_CACHE_HOME"); xdg != "" {
			base = filepath.Join(xdg, "drift")
		} else if home, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(home, ".cache", "drift")
		}
	}
	return filepath.Join(base, "assets", KubeVersion)
}

// Start starts an API server with the binaries in assetsDir.
func Start(assetsDir string) (*Server, error) {
	// envtest logs through controller-runtime's logger; drift reports its own errors.
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{BinaryAssetsDirectory: assetsDir}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("failed to start the ephemeral API server: %w", err)
	}
	return &Server{Config: cfg, env: env}, nil
}

// Stop stops the processes and removes the temporary directory.
func (s *Server) Stop() error {
	if s == nil || s.env == nil {
		return nil
	}
	return errors.Join(s.env.Stop())
}
