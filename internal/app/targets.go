package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/drift-gitops/drift/internal/plan"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/write"
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

// Targets lists the targets a run would preview, where each is defined, and why
// some are skipped or refused, without a cluster: drift targets. With a base
// ("": none), the targets the change does not touch are skipped and every file it
// touches is accounted for (the report's coverage).
func (c *Config) Targets(ctx context.Context, o *Run, base string) error {
	o.cfg = c
	defer o.closeCache()
	if o.Output != "text" && o.Output != "json" {
		return fmt.Errorf("unknown output format %q: use -o text or -o json", o.Output)
	}
	o.scrub = o.newScrubber() // the renderings' secrets, which drift targets never shows
	pl, done, err := o.openPlan(ctx, mode{base: base, configFrom: plan.ConfigFromHead, cluster: ephemeralCluster}, false)
	defer done()
	if err != nil {
		return err
	}
	return o.listTargets(pl)
}

// listTargets writes the plan's targets, in plan order.
func (o *Run) listTargets(pl *plan.Plan) error {
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
	var cov *report.Coverage
	if pl.Base != nil {
		cov = report.CoverageOf(coverageInput(pl), plannedTargets(pl))
	}
	if o.Output == "json" {
		enc := json.NewEncoder(o.cfg.Out)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []targetRow{}
		}
		if cov != nil {
			// With --base: the targets and the coverage of the change.
			if err := enc.Encode(struct {
				Targets  []targetRow      `json:"targets"`
				Coverage *report.Coverage `json:"coverage"`
			}{rows, cov}); err != nil {
				return err
			}
			return targetsExit(pl, cov)
		}
		return enc.Encode(rows)
	}
	w := tabwriter.NewWriter(o.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tFROM\tPATH\tRENDERER\tNAMESPACE\tCONTEXT\tAPPLIER\tSTATUS")
	for _, r := range rows {
		status := "previewed"
		switch {
		case r.Refused != "":
			status = "refused: " + r.Refused
		case r.Skipped != "":
			status = "skipped: " + r.Skipped
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.From, r.Path, r.Renderer, cmp.Or(r.Namespace, "-"), cmp.Or(r.Context, "-"), r.Applier, status)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, f := range pl.DiscoveryFailures {
		fmt.Fprintf(o.cfg.Out, "error: %s\n", f.Error())
	}
	if cov != nil {
		var b strings.Builder
		write.CoverageText(&b, cov)
		fmt.Fprint(o.cfg.Out, "\n"+b.String())
	}
	return targetsExit(pl, cov)
}

// targetsExit is drift targets' exit: Errors when a file looks like an Argo CD or
// Flux object but cannot be read, or (with --base) a file the change touches that a
// controller could deploy from is read by no target.
func targetsExit(pl *plan.Plan, cov *report.Coverage) error {
	if len(pl.DiscoveryFailures) > 0 || cov.Count(report.CoverageReadByNothing) > 0 {
		return Errors
	}
	return nil
}

// plannedTargets are the plan's targets as a report names them: skipped with why,
// a refused target not previewed.
func plannedTargets(pl *plan.Plan) []report.Target {
	var out []report.Target
	for _, t := range pl.Targets {
		rt := report.Target{Name: t.Name, Skipped: t.Skipped, NotPreviewed: t.NotPreviewed}
		if t.Refused != "" {
			rt.Skipped, rt.NotPreviewed = "refused: "+t.Refused, true
		}
		out = append(out, rt)
	}
	if len(pl.DiscoveryFailures) > 0 {
		out = append(out, report.Target{Name: plan.DiscoveryReader, Skipped: "it could not read the file", NotPreviewed: true})
	}
	return out
}
