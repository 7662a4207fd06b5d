// Package report turns dry-run results into a Report: it normalizes live and merged
// objects, masks Secret values, classifies each object (add, modify, unchanged,
// delete, error), computes unified diffs in-process, and writes the report as text,
// markdown or JSON.
package report
