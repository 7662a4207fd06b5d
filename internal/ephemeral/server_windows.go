package ephemeral

import (
	"context"
	"errors"

	"k8s.io/client-go/rest"
)

// Server is a running ephemeral API server; on Windows there is none.
type Server struct {
	Config *rest.Config
}

// errWindows says why there is no ephemeral server on Windows and what to do instead.
var errWindows = errors.New("the ephemeral API server is not available on Windows (envtest, which starts it, does not build there): preview against a cluster (--kubeconfig, --context), or run drift under WSL or in its container image")

// Start fails on Windows.
func Start(context.Context, string) (*Server, error) { return nil, errWindows }

// Stop does nothing: no server was started.
func (s *Server) Stop() error { return nil }

// Supported says why there is no ephemeral server here.
func Supported() error { return errWindows }
