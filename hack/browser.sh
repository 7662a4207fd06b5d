#!/usr/bin/env bash
# Prints the path of a headless-capable Chromium for the HTML report's browser test,
# installing Debian's chromium package first when none is on PATH (as
# hack/envtest-assets.sh installs etcd). Progress goes to stderr.
set -euo pipefail
browser() { command -v chromium || command -v chromium-browser || command -v google-chrome || true; }
bin="$(browser)"
if [[ -z "$bin" ]]; then
  if ! command -v apt-get > /dev/null; then
    echo "browser: chromium is not installed and there is no apt-get to install it: install Chromium for the browser test" >&2
    exit 1
  fi
  echo "browser: installing Debian's chromium package (once)" >&2
  sudo=""
  [[ "$(id -u)" == 0 ]] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-noto-color-emoji >&2
  bin="$(browser)"
fi
echo "$bin"
