#!/bin/sh
# Install drift from a GitHub release, verified against the release's checksums:
#
#   curl -fsSL https://raw.githubusercontent.com/drift-gitops/drift/main/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- v1.2.3        # a version, or v1 / v1.2: the newest under it
#
# Linux and macOS (and Windows under a POSIX shell), amd64 and arm64. The binary goes to
# $DRIFT_INSTALL_DIR (default: /usr/local/bin when writable, else ~/.local/bin).
# DRIFT_OS and DRIFT_ARCH override the platform; DRIFT_RELEASES_URL and DRIFT_API_URL
# point elsewhere than GitHub (a mirror, tests); DRIFT_API_TOKEN authenticates the
# release listing (v1, latest) against GitHub's rate limit.
# Exit status: 0 installed; 1 an error (a checksum that does not match, no
# checksums.txt: nothing unverified is installed); 3 no such release or no asset for
# this platform (the caller may build drift instead).
set -eu

ref="${1:-latest}"
repo="${DRIFT_REPOSITORY:-drift-gitops/drift}"
releases="${DRIFT_RELEASES_URL:-https://github.com/$repo/releases/download}"
api="${DRIFT_API_URL:-https://api.github.com}"

say() { printf 'drift install: %s\n' "$*" >&2; }
unavailable() { say "$*"; exit 3; }

os="${DRIFT_OS:-$(uname -s | tr '[:upper:]' '[:lower:]')}"
case "$os" in
  linux | darwin | windows) ;;
  mingw* | msys* | cygwin*) os=windows ;;
  *) unavailable "no release is built for $os" ;;
esac
arch="${DRIFT_ARCH:-$(uname -m)}"
case "$arch" in
  amd64 | x86_64) arch=amd64 ;;
  arm64 | aarch64) arch=arm64 ;;
  *) unavailable "no release is built for $arch" ;;
esac

fetch() { curl -fsSL --retry 3 --connect-timeout 10 -o "$2" "$1"; }
# DRIFT_API_TOKEN, when set, authenticates the release listing: GitHub allows 60
# unauthenticated API requests an hour per address, which shared runners use up. It is
# sent to the API alone, never with a download, and through stdin, not argv.
fetch_api() {
  if [ -z "${DRIFT_API_TOKEN:-}" ]; then
    fetch "$1" "$2"
    return
  fi
  printf 'Authorization: Bearer %s\n' "$DRIFT_API_TOKEN" |
    curl -fsSL --retry 3 --connect-timeout 10 -H @- -o "$2" "$1"
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# latest, a major or a minor version names the newest release under it.
version="$ref"
if ! printf '%s' "$ref" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+$'; then
  printf '%s' "$ref" | grep -Eq '^(latest|v[0-9]+(\.[0-9]+)?)$' || unavailable "$ref is not a release version (v1.2.3, v1.2, v1 or latest)"
  fetch_api "$api/repos/$repo/releases?per_page=100" "$tmp/releases.json" || unavailable "the releases of $repo cannot be listed"
  prefix=""
  [ "$ref" = latest ] || prefix="$(printf '%s' "${ref#v}" | sed 's/\./\\./g')\\."
  version="$(grep -o '"tag_name": *"v[0-9]*\.[0-9]*\.[0-9]*"' "$tmp/releases.json" | sed 's/.*"v\([0-9.]*\)"/\1/' |
    grep -E "^$prefix" | sort -t. -k1,1n -k2,2n -k3,3n | tail -n1 || true)"
  [ -n "$version" ] || unavailable "no release of $repo is under $ref"
  version="v$version"
fi

ext=tar.gz
[ "$os" = windows ] && ext=zip
asset="drift_${version#v}_${os}_${arch}.$ext"
fetch "$releases/$version/$asset" "$tmp/$asset" || unavailable "release $version has no $asset"
if ! fetch "$releases/$version/checksums.txt" "$tmp/checksums.txt"; then
  say "release $version has $asset but no checksums.txt: refusing an unverified binary"
  exit 1
fi
want="$(awk -v f="$asset" '$2 == f || $2 == "*"f { print $1 }' "$tmp/checksums.txt")"
if command -v sha256sum > /dev/null 2>&1; then
  got="$(sha256sum "$tmp/$asset" | awk '{print $1}')"
else
  got="$(shasum -a 256 "$tmp/$asset" | awk '{print $1}')"
fi
if [ -z "$want" ] || [ "$got" != "$want" ]; then
  say "$asset of release $version does not match its checksum (want ${want:-none listed}, got $got): refusing it"
  exit 1
fi

dir="${DRIFT_INSTALL_DIR:-}"
if [ -z "$dir" ]; then
  dir=/usr/local/bin
  [ -w "$dir" ] || dir="$HOME/.local/bin"
fi
mkdir -p "$dir" "$tmp/x"
bin=drift
if [ "$ext" = zip ]; then
  unzip -q "$tmp/$asset" -d "$tmp/x"
  bin=drift.exe
else
  tar -xzf "$tmp/$asset" -C "$tmp/x" drift
fi
mv "$tmp/x/$bin" "$dir/$bin"
chmod +x "$dir/$bin"
say "drift $version ($os/$arch) installed in $dir/$bin, checksum verified"
