// Package write writes a report for people and programs: text (with
// KUBECTL_EXTERNAL_DIFF showing the diffs through an injected Exec), -o changes,
// markdown laid out by templates/, one self-contained HTML page, and the --dump
// directories of the objects' two sides.
package write
