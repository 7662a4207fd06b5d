package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/render"
	"github.com/drift-gitops/drift/internal/source"
)

// targetRow is one target as drift targets lists it.
type targetRow struct {
	Name      string `json:"name"`
	From      string `json:"from"`
	Path      string `json:"path"`
	Renderer  string `json:"renderer"`
	Namespace string `json:"namespace,omitempty"`
	Context   string `json:"context,omitempty"`
	Applier   string `json:"applier"`
	Skipped   string `json:"skipped,omitempty"`
	Refused   string `json:"refused,omitempty"`
}

// newTargetsCommand lists the targets a run would preview, without a cluster.
func newTargetsCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &commonOptions{}
	o.init(streams)
	cmd := &cobra.Command{
		Use:   "targets",
		Short: "List the targets drift previews, and where each is defined",
		Long: `List the targets of a ref: drift.yaml's, the paths given, or those the
repository's Argo CD Applications and ApplicationSets and Flux Kustomizations and
HelmReleases define (discovered when there is no drift.yaml, or with discover: true),
each with where it is defined, its path, renderer, namespace, context and applier,
and why a target is skipped or refused. No cluster is contacted.`,
		Example: `  # The targets of the work tree
  drift targets

  # The Flux objects of one cluster's directory, as JSON
  drift targets --path clusters/staging -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Output != "text" && o.Output != "json" {
				return fmt.Errorf("unknown output format %q: use -o text or -o json", o.Output)
			}
			pl, err := plan.Open(plan.Request{
				Repo: o.Repo, Ref: o.Ref, Paths: o.Paths, Names: o.Targets, Overrides: o.overrides(),
				Config: plan.ConfigSource{File: o.Config, From: plan.ConfigFromHead, Known: knownNames()}, Warnf: o.warnf,
				NewCache: func(repo *source.Repo) (*render.Cache, error) { return o.renderCache(cmd.Context(), repo) },
				Charts:   o.charts.fetcher(o.getenv),
				Context:  cmd.Context(), MaxTargets: o.maxTargets, Branches: o.branches(), Appliers: o.appliers,
			})
			if err != nil {
				return err
			}
			return o.listTargets(pl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Repo, "repo", ".", "directory inside the git repository to read")
	f.StringVar(&o.Ref, "ref", "", "git ref to read (default: the work tree as it is on disk)")
	f.StringArrayVar(&o.Paths, "path", nil, "directory or file to render, or to discover Argo CD and Flux objects in, relative to --repo (repeatable)")
	f.StringVar(&o.Config, "config", "", "drift.yaml to use instead of the one at the root of the ref")
	f.StringArrayVar(&o.Targets, "target", nil, "list only the targets with this name (repeatable; globs allowed)")
	addBranchFlag(f, &o.Branches)
	f.StringVarP(&o.Output, "output", "o", "text", "text or json")
	addRenderLimitFlags(f, &o.renderLimits, &o.maxTargets)
	o.charts.addFlags(f, o.getenv)
	o.flags = f
	return cmd
}

// listTargets writes the plan's targets, in plan order.
func (o *commonOptions) listTargets(pl *plan.Plan) error {
	var rows []targetRow
	for _, t := range pl.Targets {
		if t.Skip == plan.SkipNotSelected {
			continue
		}
		path := t.Spec.Path
		if path == "" {
			path = "."
		}
		from := t.From
		if from == "" && t.Entry != nil {
			from = fmt.Sprintf("drift.yaml line %d", t.Entry.Line())
		}
		if from == "" {
			from = "--path"
		}
		if c := t.Spec.Helm.Chart; c != nil {
			path = c.String()
		}
		renderer := t.Spec.Renderer
		if t.From != "" && t.Spec.Renderer == "" {
			path, renderer = "-", "-" // discovered with nothing to render
		}
		rows = append(rows, targetRow{Name: t.Name, From: from, Path: path, Renderer: renderer,
			Namespace: t.Namespace, Context: t.Cluster.Context, Applier: string(t.Applier.Name()), Skipped: t.Skipped, Refused: t.Refused})
	}
	if o.Output == "json" {
		enc := json.NewEncoder(o.streams.Out)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []targetRow{}
		}
		return enc.Encode(rows)
	}
	w := tabwriter.NewWriter(o.streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tFROM\tPATH\tRENDERER\tNAMESPACE\tCONTEXT\tAPPLIER\tSTATUS")
	for _, r := range rows {
		status := "previewed"
		switch {
		case r.Refused != "":
			status = "refused: " + r.Refused
		case r.Skipped != "":
			status = "skipped: " + r.Skipped
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.From, r.Path, r.Renderer, orDash(r.Namespace), orDash(r.Context), r.Applier, status)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, f := range pl.DiscoveryFailures {
		fmt.Fprintf(o.streams.Out, "error: %s\n", f.Error())
	}
	if len(pl.DiscoveryFailures) > 0 {
		return exitStatus{exitError}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
