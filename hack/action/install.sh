#!/usr/bin/env bash
# The drift Action's install step (action.yml runs it): for a release tag of the Action
# (uses: drift-gitops/drift@v1, @v1.4 or @v1.4.2), download that release's drift for
# the runner's OS and architecture and verify it against the release's checksums.
# Anything else (a branch, a commit, a fork) is built from source by the next steps.
#
# In:  DRIFT_ACTION_REF (github.action_ref), DRIFT_ACTION_REPOSITORY
#      (github.action_repository), RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT;
#      DRIFT_RELEASES_URL and DRIFT_API_URL point elsewhere than GitHub (tests).
# Out: $RUNNER_TEMP/drift-bin/drift, and the step output installed=true|false.
# A checksum that does not match is an error, never a reason to build instead.
set -euo pipefail

ref="${DRIFT_ACTION_REF:-}"
repo="${DRIFT_ACTION_REPOSITORY:-drift-gitops/drift}"
releases="${DRIFT_RELEASES_URL:-https://github.com/$repo/releases/download}"
api="${DRIFT_API_URL:-https://api.github.com}"
out="${RUNNER_TEMP:?}/drift-bin"
output="${GITHUB_OUTPUT:-/dev/null}"

build() {
  echo "::notice title=drift::$1: building drift from source"
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

fetch() { curl -fsSL --retry 3 --connect-timeout 10 -o "$2" "$1"; }

# A major or minor tag (v1, v1.4) names the newest release under it.
version="$ref"
if [[ ! "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  list="$(mktemp)"
  fetch "$api/repos/$repo/releases?per_page=100" "$list" || build "the releases of $repo cannot be listed"
  prefix="${ref#v}"
  version="$(grep -o '"tag_name": *"v[0-9]*\.[0-9]*\.[0-9]*"' "$list" | sed 's/.*"v\([0-9.]*\)"/\1/' |
    grep -E "^${prefix//./\\.}\." | sort -t. -k1,1n -k2,2n -k3,3n | tail -n1 || true)"
  [[ -n "$version" ]] && version="v$version"
  rm -f "$list"
  [[ -n "$version" ]] || build "no release of $repo is under $ref"
fi

ext=tar.gz
[[ "$os" == windows ]] && ext=zip
asset="drift_${version#v}_${os}_${arch}.$ext"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch "$releases/$version/$asset" "$tmp/$asset" || build "release $version has no $asset"
fetch "$releases/$version/checksums.txt" "$tmp/checksums.txt" || {
  echo "::error title=drift::release $version has $asset but no checksums.txt: refusing an unverified binary"
  exit 1
}
want="$(awk -v f="$asset" '$2 == f || $2 == "*"f { print $1 }' "$tmp/checksums.txt")"
if command -v sha256sum > /dev/null; then
  got="$(sha256sum "$tmp/$asset" | awk '{print $1}')"
else
  got="$(shasum -a 256 "$tmp/$asset" | awk '{print $1}')"
fi
if [[ -z "$want" || "$got" != "$want" ]]; then
  echo "::error title=drift::$asset of release $version does not match its checksum (want ${want:-none listed}, got $got): refusing it"
  exit 1
fi
mkdir -p "$out" "$tmp/x"
if [[ "$ext" == zip ]]; then
  unzip -q "$tmp/$asset" -d "$tmp/x"
  mv "$tmp/x/drift.exe" "$out/drift.exe"
  cp "$out/drift.exe" "$out/drift"
else
  tar -xzf "$tmp/$asset" -C "$tmp/x" drift
  mv "$tmp/x/drift" "$out/drift"
fi
chmod +x "$out/drift"
echo "drift $version ($os/$arch) installed from $asset, checksum verified"
echo "installed=true" >> "$output"
echo "version=$version" >> "$output"
