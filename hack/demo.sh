#!/usr/bin/env bash
# make demo: build the demo repository and preview its head commit against a throwaway
# local API server seeded with its base commit. No cluster or credentials are needed.
set -uo pipefail
cd "$(dirname "$0")/.."
demo="${DRIFT_DEMO_DIR:-${TMPDIR:-/tmp}/drift-demo}"
go run ./hack/mkdemo "$demo" || exit 2
echo "drift diff --repo $demo --cluster ephemeral --base base --ref main" >&2
echo >&2
bin/drift diff --repo "$demo" --cluster ephemeral --base base --ref main "$@"
code=$?
echo >&2
echo "drift exited $code (0: no changes, 1: changes, 2: errors)" >&2
# 1 means the change has an effect, which is what the demo shows: not a failure of make.
[ "$code" -le 1 ]
