#!/usr/bin/env bash
# Checks the GitLab CI/CD component (templates/drift/template.yml), every pipeline
# under docs/examples/gitlab/ and the mirror's .gitlab-ci.yml (which publishes the
# component to the CI/CD catalog) with gitlab-ci-local, as GitLab would read them:
# each file's component include is pointed at the component in this tree (with its
# inputs), then --list must name the file's jobs for the pipeline it is for and
# --preview must expand it. gitlab-ci-local comes from npm into hack/.tools/ (ignored)
# the first time, as hack/cmark-gfm.sh installs its tool, and rsync, which it runs jobs
# with, from Debian. Progress goes to stderr.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/hack/.tools"
# 4.60.0 runs on Node.js 18 and 20; newer releases need Node.js 22.
version=4.60.0
bin="$tools/node_modules/.bin/gitlab-ci-local"
if [[ ! -x "$bin" ]] || [[ "$("$bin" --version 2> /dev/null)" != "$version" ]]; then
  if ! command -v npm > /dev/null; then
    echo "gitlab-ci-local: npm is not installed: install Node.js and npm (apt-get install npm) for the GitLab pipeline checks" >&2
    exit 1
  fi
  echo "gitlab-ci-local: installing gitlab-ci-local $version from npm into hack/.tools (once)" >&2
  mkdir -p "$tools"
  npm install --no-audit --no-fund --silent --prefix "$tools" "gitlab-ci-local@$version" >&2
fi
# gitlab-ci-local copies the project into its build directory with rsync, when it
# runs a job (hack/gitlab runs the component's script through it): Debian's package.
if ! command -v rsync > /dev/null; then
  if ! command -v apt-get > /dev/null; then
    echo "gitlab-ci-local: rsync is not installed and there is no apt-get to install it: install rsync for the GitLab job tests" >&2
    exit 1
  fi
  echo "gitlab-ci-local: installing Debian's rsync package (once)" >&2
  sudo=""
  [[ "$(id -u)" == 0 ]] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends rsync >&2
fi

# check FILE SOURCE [VAR=VALUE...] JOB...: the pipeline FILE (an example, or the
# mirror's .gitlab-ci.yml), as a pipeline of SOURCE with those variables, lists each
# JOB as one job (not "JOB: [1/1]", what parallel: 1 makes of it), each JOB*N as N
# parallel jobs, and no !JOB in any form.
check() {
  local file="$1" source="$2"
  shift 2
  local vars=(--variable "CI_PIPELINE_SOURCE=$source" --variable CI_PROJECT_ID=42 --variable CI_PROJECT_PATH=acme/gitops)
  if [[ "$source" == merge_request_event ]]; then
    vars+=(--variable CI_MERGE_REQUEST_IID=7 --variable CI_MERGE_REQUEST_PROJECT_ID=42 --variable CI_MERGE_REQUEST_SOURCE_PROJECT_ID=43
      --variable CI_MERGE_REQUEST_DIFF_BASE_SHA=0123456789abcdef0123456789abcdef01234567)
  fi
  while [[ $# -gt 0 && "$1" == *=* ]]; do
    vars+=(--variable "$1")
    shift
  done
  local dir
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' RETURN
  cp -r "$root/templates" "$dir/"
  sed -E 's#component: \$CI_SERVER_FQDN/[^ ]+/drift@[^ ]+#local: templates/drift/template.yml#' "$root/$file" > "$dir/.gitlab-ci.yml"
  if ! grep -q 'local: templates/drift/template.yml' "$dir/.gitlab-ci.yml"; then
    echo "gitlab-ci-local: $file does not include the component" >&2
    return 1
  fi
  (
    cd "$dir"
    git init -q -b main
    git remote add origin https://gitlab.example/acme/gitops.git
    git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m init
    "$bin" --preview "${vars[@]}" > preview.yml 2> preview.err || { cat preview.err >&2; exit 1; }
    list="$("$bin" --list "${vars[@]}" 2>&1)" || { echo "$list" >&2; exit 1; }
    jobs="$(sed -n '/^name[[:space:]]/,$p' <<< "$list" | tail -n +2)"
    for job in "$@"; do
      case "$job" in
        !*)
          if grep -Eq "^${job#!}([[:space:]:]|$)" <<< "$jobs"; then
            echo "gitlab-ci-local: $file ($source pipeline): job ${job#!} is listed, want it not:" >&2
            echo "$list" >&2
            exit 1
          fi
          ;;
        *\**)
          local name="${job%\**}" n="${job##*\*}"
          if [[ "$(grep -Ec "^$name: \[[0-9]+/$n\]" <<< "$jobs")" != "$n" ]]; then
            echo "gitlab-ci-local: $file ($source pipeline): want $n parallel jobs $name:" >&2
            echo "$list" >&2
            exit 1
          fi
          ;;
        *)
          if ! grep -Eq "^$job[[:space:]]" <<< "$jobs" || grep -Eq "^$job:" <<< "$jobs"; then
            echo "gitlab-ci-local: $file ($source pipeline): want the one job $job:" >&2
            echo "$list" >&2
            exit 1
          fi
          ;;
      esac
    done
    grep -q 'install.sh' preview.yml || { echo "gitlab-ci-local: $file's preview has no install step" >&2; exit 1; }
  )
  echo "gitlab-ci-local: $file: ok ($source: $*)" >&2
}

check docs/examples/gitlab/merge-request.yml merge_request_event drift-diff
check docs/examples/gitlab/merge-request.yml merge_request_event CI_MERGE_REQUEST_EVENT_TYPE=merged_result \
  CI_MERGE_REQUEST_TARGET_BRANCH_SHA=89abcdef0123456789abcdef0123456789abcdef drift-diff
check docs/examples/gitlab/merge-request.yml push '!drift-diff'
check docs/examples/gitlab/merge-request-sharded.yml merge_request_event 'drift-diff*3' drift-merge
check docs/examples/gitlab/merge-request-sharded.yml push '!drift-diff' '!drift-merge'
check docs/examples/gitlab/merge-request-sharded.yml schedule '!drift-diff' '!drift-merge'
check docs/examples/gitlab/drift-detect.yml schedule CI_COMMIT_BRANCH=main CI_DEFAULT_BRANCH=main drift-detect
check docs/examples/gitlab/drift-detect.yml merge_request_event '!drift-detect'
check docs/examples/gitlab/drift-detect-sharded.yml schedule CI_COMMIT_BRANCH=main CI_DEFAULT_BRANCH=main 'drift-detect*2' drift-merge
check docs/examples/gitlab/drift-detect-sharded.yml merge_request_event '!drift-detect' '!drift-merge'
check docs/examples/gitlab/merge-request-fork.yml merge_request_event drift-diff
# The mirror's pipeline: a release tag publishes a catalog version; the moving major
# tag and branches publish none; the included component never runs there.
check .gitlab-ci.yml push CI_COMMIT_TAG=v1.2.3 CI_COMMIT_REF_NAME=v1.2.3 release-assets catalog-release '!drift-detect'
check .gitlab-ci.yml push CI_COMMIT_TAG=v1 CI_COMMIT_REF_NAME=v1 '!release-assets' '!catalog-release' '!drift-detect'
check .gitlab-ci.yml push '!release-assets' '!catalog-release' '!drift-detect'
