package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/azure"
	"github.com/drift-gitops/drift/internal/cli"
	"github.com/drift-gitops/drift/internal/publish"
	"github.com/drift-gitops/drift/internal/steplog"
)

// Exit codes, as kubectl diff: 0 no changes, 1 changes, 2 errors; and 3 when a
// complete report fails the policy the run was given (--fail-on, failOn).
const (
	exitNoChanges = int(app.NoChanges)
	exitChanges   = int(app.Changes)
	exitError     = int(app.Errors)
	exitPolicy    = int(app.Policy)
)

// run executes drift with args and returns the process exit code.
func run(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	return execute(streams, func(streams genericiooptions.IOStreams) error {
		root := newRootCommand(streams)
		root.SetArgs(args)
		return root.ExecuteContext(ctx)
	})
}

// execute runs a command writing to streams and returns the process exit code.
// Every exit code is decided here. In a GitHub Actions step (GITHUB_ACTIONS=true)
// everything written to stdout and stderr is neutralised line by line
// (steplog.Writer), so that no text from a repository or a cluster is read by the
// runner as a workflow command; drift's own commands go through the stderr Writer's
// WriteCommand. In an Azure Pipelines step (TF_BUILD=True) every line is made inert
// for the agent (azure.Inert: no "##vso[" logging command, no "##[" format).
func execute(streams genericiooptions.IOStreams, command func(genericiooptions.IOStreams) error) int {
	if azure.InCI(os.Getenv) {
		out, errOut := steplog.NewLineWriter(streams.Out, azure.Inert), steplog.NewLineWriter(streams.ErrOut, azure.Inert)
		streams.Out, streams.ErrOut = out, errOut
		defer func() {
			_ = out.Flush()
			_ = errOut.Flush()
		}()
	}
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		out, errOut := steplog.NewWriter(streams.Out), steplog.NewWriter(streams.ErrOut)
		streams.Out, streams.ErrOut = out, errOut
		defer func() {
			// What the writers held back (a line ending in ':' or '#') ends the output.
			_ = out.Flush()
			_ = errOut.Flush()
		}()
	}
	err := command(streams)
	var status app.Exit
	switch {
	case err == nil:
		return exitNoChanges
	case errors.As(err, &status):
		return int(status)
	default:
		fmt.Fprintf(streams.ErrOut, "drift: error: %v\n", err)
		return exitError
	}
}

// newRootCommand is drift with its commands.
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "drift",
		Short: "Show what a change to a GitOps repository would do to a cluster",
		Long: `drift renders the manifests of a git ref, asks the cluster what applying them would
do (server-side apply with dryRun=All), and reports every object as add, modify,
unchanged, delete or error, with a unified diff.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.Version = versionString()
	root.SetVersionTemplate("{{.Version}}\n")
	var v cli.Verbosity
	v.AddFlags(root.PersistentFlags())
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return v.Apply(streams.ErrOut) }
	root.SetUsageFunc(cli.Usage)
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(newDiffCommand(streams), newDetectCommand(streams), newReportCommand(streams), newSetupCommand(streams), newTargetsCommand(streams), newCacheCommand(streams), newVersionCommand(streams))
	forges := map[string]string{"gitlab": "GitLab"}
	for _, k := range publish.Kinds {
		forges[k.Flag] = k.Name
	}
	var group func(*cobra.Command)
	group = func(c *cobra.Command) {
		cli.GroupAll(c.Flags(), forges)
		for _, sub := range c.Commands() {
			group(sub)
		}
	}
	group(root)
	return root
}
