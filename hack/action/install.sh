#!/usr/bin/env bash
# The drift Action's install step (action.yml runs it): for a release tag of the Action
# (uses: drift-gitops/drift@v1, @v1.4 or @v1.4.2), install that release's drift for
# the runner's OS and architecture with the repository's install.sh, which verifies it
# against the release's checksums. Anything else (a branch, a commit, a fork), or a
# release without an asset for this runner, is built from source by the next steps.
#
# In:  DRIFT_ACTION_REF (github.action_ref), DRIFT_ACTION_REPOSITORY
#      (github.action_repository), RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT;
#      DRIFT_RELEASES_URL and DRIFT_API_URL point elsewhere than GitHub (tests).
# Out: $RUNNER_TEMP/drift-bin/drift, and the step output installed=true|false.
# A checksum that does not match is an error, never a reason to build instead.
set -uo pipefail
# shellcheck source=SCRIPTDIR/log.sh
source "$(dirname "$0")/log.sh"

ref="${DRIFT_ACTION_REF:-}"
output="${GITHUB_OUTPUT:-/dev/null}"

build() {
  echo "::notice title=drift::$(command_data "$1"): building drift from source"
  echo "installed=false" >> "$output"
  exit 0
}

[[ "$ref" =~ ^v[0-9]+(\.[0-9]+)?(\.[0-9]+)?$ ]] || build "the Action is used at ${ref:-an unknown ref}, not a release tag"
case "${RUNNER_OS:-Linux}" in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  Windows) os=windows ;;
  *) build "no release is built for $RUNNER_OS" ;;
esac
case "${RUNNER_ARCH:-X64}" in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) build "no release is built for $RUNNER_ARCH" ;;
esac

dir="${RUNNER_TEMP:?}/drift-bin"
log="$(mktemp)"
DRIFT_OS="$os" DRIFT_ARCH="$arch" DRIFT_INSTALL_DIR="$dir" DRIFT_REPOSITORY="${DRIFT_ACTION_REPOSITORY:-drift-gitops/drift}" \
  sh "$(dirname "$0")/../../install.sh" "$ref" 2> "$log"
status=$?
msg="$(sed 's/^drift install: //' "$log" | tail -n1)"
rm -f "$log"
case "$status" in
  0)
    [[ "$os" == windows ]] && cp "$dir/drift.exe" "$dir/drift"
    log_text "$msg"
    echo "installed=true" >> "$output"
    ;;
  3) build "$msg" ;;
  *)
    echo "::error title=drift::$(command_data "$msg")"
    exit 1
    ;;
esac
