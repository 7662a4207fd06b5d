//go:build !windows

package ephemeral

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/drift-gitops/drift/internal/subprocess"
	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Server is a running ephemeral API server.
type Server struct {
	Config *rest.Config
	env    *envtest.Environment
	dir    *runDir
	// bin holds the wrappers the processes were started through, and their pids.
	bin string
}

// Supported says whether this platform has the ephemeral server: nil here, an error
// saying what to do instead on Windows.
func Supported() error { return nil }

// startTimeout is envtest's default time for each process to become ready.
const startTimeout = 20 * time.Second

// Start starts an API server with the binaries in assetsDir, in a run directory of its
// own; ctx's deadline bounds the start. It first removes the directories that drift
// processes killed earlier left behind.
func Start(ctx context.Context, assetsDir string) (*Server, error) {
	if subprocess.Role() != "" {
		// A program that embeds this package but does not dispatch drift's roles in its
		// main (ReaperMain) would start a server from every reaper, without end.
		return nil, fmt.Errorf("the ephemeral API server was not started: this process was started as drift's %s process, and its main must call ephemeral.ReaperMain for that role", subprocess.Role())
	}
	timeout := startTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(deadline))
	}
	if ctx.Err() != nil || timeout <= 0 {
		return nil, fmt.Errorf("the ephemeral API server was not started: %w", cmp.Or(context.Cause(ctx), context.DeadlineExceeded))
	}
	// envtest logs through controller-runtime's logger; drift reports its own errors.
	ctrllog.SetLogger(logr.Discard())
	_ = removeLeftovers(os.TempDir(), time.Now())
	dir, err := newRunDir()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir.path, "bin")
	env, err := environment(dir, bin, assetsDir, timeout)
	if err != nil {
		return nil, errors.Join(err, dir.remove())
	}
	// envtest cannot be interrupted, and retries a failed start up to five times: when
	// ctx ends, drift kills what it started and takes the wrappers away, so that it
	// gives up at once. Should it not within abortGrace, drift goes on without it: what
	// it started dies with drift, and the next start removes the directory.
	type started struct {
		cfg *rest.Config
		err error
	}
	done := make(chan started, 1)
	go func() {
		cfg, err := env.Start()
		done <- started{cfg, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, errors.Join(fmt.Errorf("failed to start the ephemeral API server: %w", r.err), env.Stop(), dir.remove())
		}
		return &Server{Config: r.cfg, env: env, dir: dir, bin: bin}, nil
	case <-ctx.Done():
		err := fmt.Errorf("the ephemeral API server did not start in time: %w", context.Cause(ctx))
		abort(bin)
		select {
		case <-done:
			return nil, errors.Join(err, env.Stop(), dir.remove())
		case <-time.After(abortGrace):
			return nil, err
		}
	}
}

// abortGrace is how long an interrupted start may take to give up.
const abortGrace = 5 * time.Second

// environment configures envtest to run the binaries through wrappers in bin, with
// their files in dir.
func environment(dir *runDir, bin, assetsDir string, timeout time.Duration) (*envtest.Environment, error) {
	bins, err := guard(bin, filepath.Join(assetsDir, "etcd"), filepath.Join(assetsDir, "kube-apiserver"))
	if err != nil {
		return nil, err
	}
	certs, data := filepath.Join(dir.path, "apiserver"), filepath.Join(dir.path, "etcd")
	for _, d := range []string{certs, data} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("failed to create %s: %w", d, err)
		}
	}
	api := &envtest.APIServer{Path: bins[1], CertDir: certs}
	api.Configure().Set("service-cluster-ip-range", ServiceCIDR)
	return &envtest.Environment{
		BinaryAssetsDirectory: assetsDir,
		ControlPlane: envtest.ControlPlane{
			Etcd:      &envtest.Etcd{Path: bins[0], DataDir: data},
			APIServer: api,
		},
		ControlPlaneStartTimeout: timeout,
	}, nil
}

// Stop kills the processes and removes the run directory. Nothing of the server is
// kept, so it is not shut down gracefully (kube-apiserver's graceful shutdown took
// a second of every run): its processes are killed (abort), and envtest only waits
// for them.
func (s *Server) Stop() error {
	if s == nil || s.env == nil {
		return nil
	}
	abort(s.bin)
	err := s.env.Stop()
	if errors.Is(err, os.ErrProcessDone) {
		err = nil // killed before envtest signalled it
	}
	return errors.Join(err, s.dir.remove())
}
