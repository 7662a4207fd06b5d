package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/report"
)

// newReportCommand groups what drift does with reports it wrote.
func newReportCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Work with drift's JSON reports",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newMergeCommand(streams))
	return cmd
}

// newMergeCommand combines the shards of a run (drift diff --shard I/N) into its
// report, written and published once.
func newMergeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &commonOptions{}
	o.init(streams)
	cmd := &cobra.Command{
		Use:   "merge SHARD.json...",
		Short: "Combine the JSON reports of a run's shards into the run's report, and publish it",
		Long: `Combine the JSON reports every shard of one run wrote (drift diff --shard I/N -o json,
or drift detect) into the report one runner would have given: the same JSON, byte for
byte. Shards of different runs (another commit, base, cluster, drift.yaml or plan),
a shard given twice and a missing shard are refused. The merged report is written and
published as drift diff's is (--github-comment, --github-issue, --step-summary,
--json-report).

Exit status: 0 no changes, 1 changes, 2 errors (the report is then incomplete).`,
		Example: `  # Three runners each preview a third of the run...
  drift diff --base origin/main --shard 1/3 -o json --out shard-1.json
  # ...and one job merges and comments on the pull request
  drift report merge shard-*.json --github-comment`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scrub = o.newScrubber()
			if err := o.merge(cmd, args); err != nil {
				return scrubbedError{err: err, scrub: o.scrub}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "text", "report format: text, markdown or json")
	f.StringVar(&o.OutFile, "out", "", "write the report to this file instead of stdout")
	f.BoolVar(&o.ShowUnchanged, "show-unchanged", false, "list unchanged objects by name (they are always counted)")
	o.github.addFlags(f)
	o.report.addFlags(f, false)
	f.BoolVar(&o.github.Issue, "github-issue", false, "for shards of drift detect: keep one GitHub issue (label drift) for this target set")
	o.flags = f
	return cmd
}

// merge reads the shards' reports, merges them and finishes as a run does.
func (o *commonOptions) merge(cmd *cobra.Command, files []string) error {
	if !slices.Contains(report.Formats, o.Output) {
		return fmt.Errorf("unknown output format %q: use -o text, -o markdown or -o json", o.Output)
	}
	if err := o.report.validate(); err != nil {
		return err
	}
	if err := o.github.options().Preflight(o.getenv); err != nil {
		return err
	}
	shards := map[string]*report.Report{}
	for _, name := range files {
		if _, dup := shards[name]; dup {
			return fmt.Errorf("%s is given twice", name)
		}
		rep, err := readReport(name)
		if err != nil {
			return err
		}
		shards[name] = rep
	}
	rep, err := report.Merge(shards)
	if err != nil {
		return err
	}
	// Each shard judged itself by drift.yaml's failOn: the whole run is judged by it too.
	for _, s := range shards {
		if s.Policy != nil {
			o.report.configFailOn = append(o.report.configFailOn, s.Policy.FailOn...)
		}
	}
	// A merged report holds the diffs, not the objects an external diff program
	// (KUBECTL_EXTERNAL_DIFF) would compare: the diffs are shown as they are.
	o.noObjects = true
	return o.finish(cmd.Context(), rep)
}

// readReport reads one JSON report.
func readReport(name string) (*report.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := report.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rep, nil
}
