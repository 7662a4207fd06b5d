#!/usr/bin/env bash
# Checks the GitLab CI/CD component (templates/drift/template.yml) and every pipeline
# under docs/examples/gitlab/ with gitlab-ci-local, as GitLab would read them: each
# example's component include is pointed at the component in this tree (with its
# inputs), then --list must name the example's jobs for the pipeline it is for and
# --preview must expand it. gitlab-ci-local comes from npm into hack/.tools/ (ignored)
# the first time, as hack/cmark-gfm.sh installs its tool. Progress goes to stderr.
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

# check EXAMPLE SOURCE JOB...: the example, in a pipeline of SOURCE, lists each JOB
# (and not a !JOB).
check() {
  local example="$1" source="$2"
  shift 2
  local dir
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' RETURN
  cp -r "$root/templates" "$dir/"
  sed 's#component: \$CI_SERVER_FQDN/drift-gitops/drift/drift@v1#local: templates/drift/template.yml#' "$root/$example" > "$dir/.gitlab-ci.yml"
  if ! grep -q 'local: templates/drift/template.yml' "$dir/.gitlab-ci.yml"; then
    echo "gitlab-ci-local: $example does not include the component" >&2
    return 1
  fi
  (
    cd "$dir"
    git init -q -b main
    git remote add origin https://gitlab.example/acme/gitops.git
    git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m init
    vars=(--variable "CI_PIPELINE_SOURCE=$source" --variable CI_MERGE_REQUEST_IID=7 --variable CI_PROJECT_ID=42
      --variable CI_MERGE_REQUEST_PROJECT_ID=42 --variable CI_MERGE_REQUEST_SOURCE_PROJECT_ID=43
      --variable CI_MERGE_REQUEST_DIFF_BASE_SHA=0123456789abcdef0123456789abcdef01234567)
    "$bin" --preview "${vars[@]}" > preview.yml 2> preview.err || { cat preview.err >&2; exit 1; }
    list="$("$bin" --list "${vars[@]}" 2>&1)" || { echo "$list" >&2; exit 1; }
    for job in "$@"; do
      want=true
      [[ "$job" == !* ]] && want=false job="${job#!}"
      if grep -Eq "^$job([[:space:]:]|$)" <<< "$list"; then found=true; else found=false; fi
      if [[ "$found" != "$want" ]]; then
        echo "gitlab-ci-local: $example ($source pipeline): job $job listed: $found, want $want:" >&2
        echo "$list" >&2
        exit 1
      fi
    done
    grep -q 'install.sh' preview.yml || { echo "gitlab-ci-local: $example's preview has no install step" >&2; exit 1; }
  )
  echo "gitlab-ci-local: $example: ok ($source: $*)" >&2
}

check docs/examples/gitlab/merge-request.yml merge_request_event drift-diff
check docs/examples/gitlab/merge-request.yml push '!drift-diff'
check docs/examples/gitlab/merge-request-sharded.yml merge_request_event drift-diff drift-merge
check docs/examples/gitlab/drift-detect.yml schedule drift-detect
check docs/examples/gitlab/drift-detect.yml merge_request_event '!drift-detect'
check docs/examples/gitlab/merge-request-fork.yml merge_request_event drift-diff
