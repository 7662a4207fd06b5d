package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

// newVersionCommand prints drift's version.
func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print drift's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(streams.Out, versionString())
			return nil
		},
	}
}

// versionString is drift's version, commit and Go version, from -ldflags or the build info.
func versionString() string {
	v, commit, goVersion := version, "", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	out := "drift " + v
	if commit != "" {
		out += " (" + commit + ")"
	}
	return fmt.Sprintf("%s %s", out, goVersion)
}
