// Package app is what drift's commands do, as library entry points: Diff, Detect,
// Targets and Merge, over one Config of what they share from outside them (the
// streams, the environment, kubectl's connection flags, connecting to a cluster,
// starting an ephemeral server, the appliers, the clock, the files it writes), as
// helm's pkg/action is over its
// Configuration. cmd/drift binds flags onto a Run and maps an Exit to the process's
// exit code.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/drift-gitops/drift/internal/applier"
	"github.com/drift-gitops/drift/internal/applier/appliers"
	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/files"
	"github.com/drift-gitops/drift/internal/kube"
)

// Config is what every command shares from outside it.
type Config struct {
	// Out is where reports go, ErrOut warnings, progress and errors.
	Out, ErrOut io.Writer
	// Getenv reads the environment (CI variables, KUBECTL_EXTERNAL_DIFF, NO_COLOR).
	Getenv func(string) string
	// Kube are kubectl's connection flags: the runner's kubeconfig, context and
	// credentials, for every cluster the run reads.
	Kube *genericclioptions.ConfigFlags
	// Connect opens a live cluster with flags (kube.Connect); credential is told the
	// connection's secrets, so that no output holds them.
	Connect func(ctx context.Context, flags *genericclioptions.ConfigFlags, concurrency int, credential func(...string)) (*kube.Connection, error)
	// StartEphemeral starts a throwaway API server (ephemeral.Connect) from the
	// binaries drift setup installed in cache (or KUBEBUILDER_ASSETS); stop releases it.
	StartEphemeral func(ctx context.Context, getenv func(string) string, cache *cachedir.Dir, concurrency int) (conn *kube.Connection, stop func(), err error)
	// Appliers are the appliers targets are decided among.
	Appliers *applier.Registry
	// Now is the clock (the dry-run cache's: how recent a change to what decides
	// answers is, when its pack was written).
	Now func() time.Time
	// Files is where Publish writes the files a run is asked for (--out, --html,
	// --json-report, the comment file, the job summary, step outputs, the dotenv
	// report), and where Merge reads the shards' reports from. The repository and
	// drift's cache directory are read where they are on disk (go-git, and the
	// cache's checks of who owns what), and so are --dump's directory, the files an
	// external diff program compares and --markdown-template.
	Files files.FS
}

// NewConfig is the Config of a drift process writing to out and errOut: the process's
// environment, kubectl's flags (bound by the caller), the real connections.
func NewConfig(out, errOut io.Writer) *Config {
	kubeFlags := genericclioptions.NewConfigFlags(true)
	// kubectl's --cluster is not drift's: diff has its own, detect has none.
	kubeFlags.ClusterName = nil
	return &Config{Out: out, ErrOut: errOut, Getenv: os.Getenv, Kube: kubeFlags,
		Connect: kube.Connect, StartEphemeral: ephemeral.Connect, Appliers: appliers.All(), Now: time.Now, Files: files.OS{}}
}

// Exit is how a command ended when it did not fail outright, and the process's exit
// code for it: as kubectl diff, 0 no changes, 1 changes, 2 errors; 3 when a complete
// report fails the policy (--fail-on, failOn).
type Exit int

// The exits.
const (
	NoChanges Exit = 0
	Changes   Exit = 1
	Errors    Exit = 2
	Policy    Exit = 3
)

func (e Exit) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runTimeout is the cause of a run's end at --timeout, so that the messages of whatever
// it interrupted say so; it is a context.DeadlineExceeded.
type runTimeout time.Duration

func (d runTimeout) Error() string { return fmt.Sprintf("timed out after %s", time.Duration(d)) }

func (runTimeout) Is(target error) bool { return target == context.DeadlineExceeded }
