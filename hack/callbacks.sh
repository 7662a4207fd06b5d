#!/usr/bin/env bash
# callbacks.sh: how often following a run through drift's calls goes back into a
# package it left. Builds drift's call graph from its main (golang.org/x/tools'
# callgraph, variable type analysis, which resolves function values and interfaces)
# and counts the calls that go back into a package importing the caller's
# (hack/callbacks). Takes about five minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go list -f '{{.ImportPath}} {{join .Deps " "}}' ./... >"$tmp/deps"
go run golang.org/x/tools/cmd/callgraph@v0.49.0 -algo=vta \
  -format='{{if .Caller.Pkg}}{{.Caller.Pkg.Pkg.Path}}{{end}}	{{if .Callee.Pkg}}{{.Callee.Pkg.Pkg.Path}}{{end}}	{{.Caller}}	{{.Callee}}' \
  ./cmd/drift >"$tmp/graph"
go run ./hack/callbacks "$tmp/deps" <"$tmp/graph"
