// Package cli is how drift's commands look on a terminal: --help with its flags in
// groups, kubectl's -v routed to client-go's log, and profiling for measurements.
package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// maxVerbosity is the highest -v drift honours: client-go logs each request's method,
// URL, status and time at 6; from 7 on it logs headers and bodies, and a dry-run
// apply's body holds Secret values.
const maxVerbosity = 6

// Verbosity is -v/--v, kubectl's flag: client-go's log on stderr.
type Verbosity struct {
	level int
}

// AddFlags registers -v on f.
func (v *Verbosity) AddFlags(f *pflag.FlagSet) {
	f.IntVarP(&v.level, "v", "v", 0, fmt.Sprintf("log verbosity on stderr: 4 discovery and retries, 6 every request sent to the API servers (at most %d: higher levels would log request bodies, which hold Secret values)", maxVerbosity))
}

// Apply routes klog (client-go's log) to w at the level asked for; at 0, nowhere.
func (v *Verbosity) Apply(w io.Writer) error {
	if v.level < 0 {
		return fmt.Errorf("-v must not be negative, got %d", v.level)
	}
	if v.level == 0 {
		klog.SetLogger(logr.Discard())
		return nil
	}
	level := min(v.level, maxVerbosity)
	if v.level > maxVerbosity {
		fmt.Fprintf(w, "drift: warning: -v %d is %d: higher levels would log request bodies, which hold Secret values\n", v.level, maxVerbosity)
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"v": fmt.Sprint(level), "logtostderr": "false", "alsologtostderr": "false", "skip_headers": "false"} {
		if err := fs.Set(name, value); err != nil {
			return err
		}
	}
	klog.ClearLogger()
	klog.SetOutput(w)
	return nil
}

// Flag groups, shown apart in --help.
const (
	groupAnnotation = "drift/group"
	groupKube       = "Kubernetes connection flags"
	groupGitHub     = "GitHub flags"
	groupReport     = "Report flags"
	groupRender     = "Rendering and chart flags"
)

// groupFlags marks the flags of f whose names match as belonging to group.
func groupFlags(f *pflag.FlagSet, group string, match func(name string) bool) {
	f.VisitAll(func(fl *pflag.Flag) {
		if match(fl.Name) && fl.Annotations[groupAnnotation] == nil {
			_ = f.SetAnnotation(fl.Name, groupAnnotation, []string{group})
		}
	})
}

// Usage prints a command's help with its flags in groups: drift's own first, then
// the report's, rendering's, GitHub's and the Kubernetes connection's, as kubectl
// sets its global flags apart.
func Usage(c *cobra.Command) error {
	w := c.OutOrStderr()
	fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\nCommands:\n")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %-10s %s\n", sub.Name(), sub.Short)
			}
		}
	}
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	}
	groups := map[string]*pflag.FlagSet{}
	c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		g := "Flags"
		if a := fl.Annotations[groupAnnotation]; len(a) > 0 {
			g = a[0]
		}
		if groups[g] == nil {
			groups[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
		}
		groups[g].AddFlag(fl)
	})
	order := []string{"Flags", groupReport, groupRender, groupGitHub, groupKube}
	for g := range groups {
		if !slices.Contains(order, g) {
			order = append(order, g)
		}
	}
	sort.SliceStable(order[5:], func(i, j int) bool { return order[5+i] < order[5+j] })
	for _, g := range order {
		if fs := groups[g]; fs != nil {
			fmt.Fprintf(w, "\n%s:\n%s", g, fs.FlagUsages())
		}
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\nGlobal flags:\n%s", c.InheritedFlags().FlagUsages())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\nUse \"%s [command] --help\" for more about a command.\n", c.CommandPath())
	}
	return nil
}

// FlagError adds where to look to a flag error, as kubectl does.
func FlagError(c *cobra.Command, err error) error {
	return fmt.Errorf("%w\nSee '%s --help'.", err, c.CommandPath())
}

// isKubeFlag reports whether name is a connection flag genericclioptions.ConfigFlags
// adds (drift's own --cluster is not one: diff's names ephemeral servers).
func isKubeFlag(name string) bool {
	switch name {
	case "kubeconfig", "context", "namespace", "server", "token", "user", "username", "password", "as", "as-group", "as-uid",
		"certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify", "tls-server-name",
		"request-timeout", "cache-dir", "disable-compression", "as-user-extra", "proxy-url":
		return true
	}
	return false
}

// isGitHubFlag reports whether name is a flag of the GitHub side.
func isGitHubFlag(name string) bool {
	return strings.HasPrefix(name, "github-") || name == "step-summary" || name == "json-report" || name == "comment-file" || name == "fail-on-deletes"
}

// isReportFlag reports whether name is a flag of how the report is written.
func isReportFlag(name string) bool {
	switch name {
	case "output", "out", "show-unchanged", "show-secrets", "dump", "fail-on", "color", "markdown-template", "html", "html-artifact", "unified", "dotenv":
		return true
	}
	return false
}

// isRenderFlag reports whether name is a flag of rendering or chart fetching.
func isRenderFlag(name string) bool {
	switch name {
	case "offline", "resolve-ranges", "repository-config", "registry-config":
		return true
	}
	return strings.HasPrefix(name, "render-")
}

// GroupAll sorts a command's flags into the help's groups; forges maps a forge's
// flag prefix ("gitlab") to its name ("GitLab"), each forge's flags a group of their
// own after GitHub's.
func GroupAll(f *pflag.FlagSet, forges map[string]string) {
	for prefix, name := range forges {
		groupFlags(f, name+" flags", func(n string) bool { return strings.HasPrefix(n, prefix+"-") })
	}
	groupFlags(f, groupKube, isKubeFlag)
	groupFlags(f, groupGitHub, isGitHubFlag)
	groupFlags(f, groupReport, isReportFlag)
	groupFlags(f, groupRender, isRenderFlag)
}
