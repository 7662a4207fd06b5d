#!/usr/bin/env bash
# The drift Action's main step (action.yml runs it). Inputs arrive as DRIFT_INPUT_*
# variables; the drift binary as DRIFT_BIN. In diff mode it previews the ref (HEAD,
# the checked-out pull request, unless the ref input names a fetched commit) against
# the base and posts the comment, the check and the job summary; in detect mode it
# checks the ref for drift and keeps the drift issue. With the shard input it previews
# that share of the run and publishes nothing but its JSON report (output report-json);
# merge mode combines the shards' reports and publishes them as one diff run would.
# It sets the step outputs either way. drift's exit status 1 (changes) fails the step
# only with fail-on-changes; 2 (errors, an incomplete report) and 3 (the report fails
# the policy: fail-on, drift.yaml's failOn) always do. On Gitea Actions and Forgejo
# Actions (act_runner and forgejo-runner set GITEA_ACTIONS or FORGEJO_ACTIONS, and
# GITHUB_ACTIONS too) it posts to the Gitea or Forgejo instance with --gitea-*.
set -uo pipefail
# shellcheck source=SCRIPTDIR/log.sh
source "$(dirname "$0")/log.sh"

# with_base adds --base for the base-ref input, fetching it when the checkout lacks
# it: actions/checkout fetches one commit, so no fetch-depth: 0 is needed. The ref and
# git's messages are printed through log_text, never as they are.
with_base() {
  local base="${DRIFT_INPUT_BASE_REF:-}"
  if [[ "$base" == -* ]]; then
    echo "::error::base-ref $(command_data "$base") is not a commit or a ref" >&2
    return 1
  fi
  [[ -n "$base" ]] || return 0
  if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
    log_text "drift: fetching the base $base (the checkout does not hold it)" >&2
    local fetched fetch_status
    fetched="$(git fetch --quiet --no-tags --depth=1 origin "$base" 2>&1)"
    fetch_status=$?
    [[ -n "$fetched" ]] && log_text "$fetched" >&2
    if (( fetch_status != 0 )); then
      echo "::warning title=drift::the base $(command_data "$base") could not be fetched: drift will say what it cannot read" >&2
    fi
  fi
  args+=(--base "$base")
}

# The forge the comment and the issue go to: GitHub's flags, or Gitea's on a Gitea or
# Forgejo runner (github-author names a GitHub login: it is not passed there).
forge=github
[[ "${GITEA_ACTIONS:-}" == "true" || "${FORGEJO_ACTIONS:-}" == "true" ]] && forge=gitea

ref="${DRIFT_INPUT_REF:-HEAD}"
shard="${DRIFT_INPUT_SHARD:-}"
mode="${DRIFT_INPUT_MODE:-diff}"
case "$mode" in
  detect)
    # A scheduled drift check: the checked-out branch against the cluster, kept in one issue.
    args=(detect --ref "$ref")
    [[ -z "$shard" ]] && args+=("--$forge-issue")
    if [[ -n "${DRIFT_INPUT_CLUSTER:-}" ]]; then
      echo "::error::the cluster input is for mode: diff; drift detect checks the live clusters of drift.yaml's targets" >&2
      exit 2
    fi
    ;;
  merge)
    # The shards' reports, one file or glob per line, merged and published once.
    args=(report merge "--$forge-comment")
    if [[ -n "$shard" ]]; then
      echo "::error::the shard input is for the matrix jobs of mode: diff or detect; mode: merge combines their reports" >&2
      exit 2
    fi
    reports=()
    while IFS= read -r pattern; do
      [[ -n "${pattern// /}" ]] || continue
      # shellcheck disable=SC2206 # globs are the point
      reports+=($pattern)
    done <<< "${DRIFT_INPUT_REPORTS:-}"
    if (( ${#reports[@]} == 0 )); then
      echo "::error::mode: merge needs the reports input: the JSON reports the shards wrote (report-json), one file or glob per line" >&2
      exit 2
    fi
    args+=("${reports[@]}")
    # The merge plans the run again, as the shards did, to check their reports.
    args+=(--ref "$ref")
    with_base || exit 2
    ;;
  *)
    args=(diff --ref "$ref")
    [[ -z "$shard" ]] && args+=("--$forge-comment")
    with_base || exit 2
    [[ -n "${DRIFT_INPUT_CLUSTER:-}" ]] && args+=(--cluster "$DRIFT_INPUT_CLUSTER")
    ;;
esac
[[ "$forge" == github && -n "${DRIFT_INPUT_GITHUB_AUTHOR:-}" ]] && args+=(--github-author "$DRIFT_INPUT_GITHUB_AUTHOR")
args+=(--github-output --json-report "${RUNNER_TEMP:-/tmp}/drift/report.json")
[[ "${DRIFT_INPUT_FAIL_ON_DELETES:-false}" == "true" ]] && args+=(--fail-on-deletes)
[[ -n "${DRIFT_INPUT_FAIL_ON:-}" ]] && args+=(--fail-on "${DRIFT_INPUT_FAIL_ON// /}")
if [[ -z "$shard" ]]; then
  # The HTML report, uploaded by the next step as an artifact the comment points to.
  args+=(--html "${RUNNER_TEMP:-/tmp}/drift/report.html")
  [[ -n "${DRIFT_INPUT_ARTIFACT_NAME:-}" ]] && args+=(--html-artifact "$DRIFT_INPUT_ARTIFACT_NAME")
fi
[[ "$mode" != "merge" && -n "$shard" ]] && args+=(--shard "$shard")
[[ "$mode" != "merge" && "${DRIFT_INPUT_CACHE:-true}" == "false" ]] && args+=(--no-cache)
# The selection is the merge's too: it plans the run again as the shards did.
[[ -n "${DRIFT_INPUT_CONFIG:-}" ]] && args+=(--config "$DRIFT_INPUT_CONFIG")
while IFS= read -r target; do
  [[ -n "${target// /}" ]] && args+=(--target "$target")
done <<< "${DRIFT_INPUT_TARGETS:-}"
if [[ -n "${DRIFT_INPUT_ARGS:-}" ]]; then
  read -r -a extra <<< "$DRIFT_INPUT_ARGS"
  args+=("${extra[@]}")
fi

mkdir -p "${RUNNER_TEMP:-/tmp}/drift"
"${DRIFT_BIN:?DRIFT_BIN names the drift binary}" "${args[@]}"
status=$?
case "$status" in
  0) exit 0 ;;
  1) [[ "${DRIFT_INPUT_FAIL_ON_CHANGES:-false}" == "true" ]] && exit 1; exit 0 ;;
  3) echo "::error title=drift::the change fails the policy (fail-on): see the comment"; exit 3 ;;
  *) echo "::error title=drift::the preview is incomplete (exit $status): see the job summary"; exit "$status" ;;
esac
