#!/usr/bin/env bash
# Prints the path of cmark-gfm, GitHub's own markdown renderer, for the test that
# renders the pull-request comment as GitHub does (internal/report/write), installing
# Debian's cmark-gfm package first when it is not on PATH (as hack/browser.sh installs
# chromium). Progress goes to stderr.
set -euo pipefail
bin="$(command -v cmark-gfm || true)"
if [[ -z "$bin" ]]; then
  if ! command -v apt-get > /dev/null; then
    echo "cmark-gfm: cmark-gfm is not installed and there is no apt-get to install it: install cmark-gfm for the markdown test" >&2
    exit 1
  fi
  echo "cmark-gfm: installing Debian's cmark-gfm package (once)" >&2
  sudo=""
  [[ "$(id -u)" == 0 ]] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends cmark-gfm >&2
  bin="$(command -v cmark-gfm)"
fi
echo "$bin"
