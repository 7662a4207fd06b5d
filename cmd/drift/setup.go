package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/app"
	"github.com/drift-gitops/drift/internal/cachedir"
	"github.com/drift-gitops/drift/internal/ephemeral"
)

// newSetupCommand installs what --cluster ephemeral runs.
func newSetupCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var opts ephemeral.SetupOptions
	cfg := app.NewConfig(streams.Out, streams.ErrOut)
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Install the binaries --cluster ephemeral needs (etcd, kube-apiserver)",
		Long: `Install etcd and kube-apiserver into drift's cache directory, where they are missing,
and print where they went. --cluster ephemeral finds them there, or through
KUBEBUILDER_ASSETS.

They are downloaded from the envtest release index setup-envtest uses (prebuilt for
Linux and macOS, amd64 and arm64), verified against the index's SHA-512, in seconds and
with neither Go nor apt-get. Where the index cannot be reached, or does not list the
version or platform (or with --from-source), etcd comes from Debian's etcd-server
package and kube-apiserver is built from the Go module proxy (a few minutes, once).
When the index does not list the default version, the newest patch release of its
minor that it lists is taken (the ephemeral server uses it); a --kube-version given
is taken exactly. An archive that does not match its hash is refused. ` + ephemeral.IndexEnv + ` names a
mirror of the index.

What it installs it records, sealed with the key of drift's cache (beside the cache
directory, or ` + cachedir.KeyEnv + `): --cluster ephemeral runs only binaries whose
SHA-512 matches that record, and setup installs again over anything else it finds.
A cache directory inside the git repository setup runs in is refused.`,
		Example: `  # The default version, ready for drift diff --cluster ephemeral
  drift setup

  # Another Kubernetes version; point KUBEBUILDER_ASSETS at what it prints
  export KUBEBUILDER_ASSETS="$(drift setup --kube-version v1.35.0 | sed 's/.* in //')"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Env, opts.Progress = os.Environ(), streams.ErrOut
			opts.Exact = cmd.Flags().Changed("kube-version")
			var err error
			if opts.Cache, err = cfg.OpenCache("."); err != nil {
				return err
			}
			dir, err := ephemeral.Setup(cmd.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "etcd and kube-apiserver are in %s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.KubeVersion, "kube-version", ephemeral.KubeVersion, "Kubernetes version of kube-apiserver (the default is what --cluster ephemeral uses without KUBEBUILDER_ASSETS)")
	cmd.Flags().BoolVar(&opts.FromSource, "from-source", false, "do not download: etcd from Debian's etcd-server package, kube-apiserver built from the Go module proxy")
	return cmd
}
