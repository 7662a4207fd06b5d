#!/usr/bin/env bash
# make screenshots: the demo's pull request comment (rendered as GitHub renders
# markdown, near enough) and its HTML report, as the PNGs docs/report.md shows. Needs
# Debian's chromium (apt-get install chromium) and the envtest binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [[ -z "$browser" ]]; then
  echo "screenshots: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
DRIFT_DEMO_DIR="$tmp/demo" hack/demo.sh -o markdown --out "$tmp/comment.md" --html "$tmp/report.html" 2>/dev/null
go run ./hack/mdhtml "$tmp/comment.md" > "$tmp/comment.html"
shot() {
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$tmp/profile" --virtual-time-budget=3000 --window-size="$2" \
    --screenshot="$1" "$3" 2>/dev/null
}
mkdir -p docs/images
shot docs/images/comment.png 960,660 "file://$tmp/comment.html"
# The Deployment's details opened: o-2 is the second risky object of the demo.
shot docs/images/report-html.png 1280,1100 "file://$tmp/report.html#o-2"
echo "wrote docs/images/comment.png and docs/images/report-html.png" >&2
