package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/dryrun/ephemeral"
)

// newSetupCommand installs what --cluster ephemeral runs.
func newSetupCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "setup",
		Short: "Install the binaries --cluster ephemeral needs (etcd, kube-apiserver)",
		Long: `Install etcd (Debian's etcd-server package) and kube-apiserver ` + ephemeral.KubeVersion + ` (built from
the Go module proxy, a few minutes once) into drift's cache directory, where they are
missing, and print where they went. --cluster ephemeral finds them there, or through
KUBEBUILDER_ASSETS.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := ephemeral.Setup(cmd.Context(), os.Environ(), streams.ErrOut)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "etcd and kube-apiserver are in %s\n", dir)
			return nil
		},
	}
}
