#!/usr/bin/env bash
# hack/release-check.sh DIST: check what `make release-snapshot` (goreleaser) wrote: an
# archive per platform of .goreleaser.yaml, each matching checksums.txt and holding
# drift with LICENSE, README.md and CHANGELOG.md, and a drift stamped with the
# release's version (run here for the machine's own platform, found in the binary for the others).
set -euo pipefail
dist="${1:-dist}"
version="$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$dist/metadata.json" | head -n1)"
[[ -n "$version" ]] || { echo "release-check: no version in $dist/metadata.json" >&2; exit 1; }
host="$(go env GOOS)_$(go env GOARCH)"
fail=0
(cd "$dist" && sha256sum -c --quiet checksums.txt) || { echo "release-check: checksums.txt does not match" >&2; fail=1; }
for platform in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64; do
  ext=tar.gz bin=drift
  [[ "$platform" == windows_* ]] && ext=zip bin=drift.exe
  archive="$dist/drift_${version}_${platform}.$ext"
  if [[ ! -f "$archive" ]] || ! grep -q " drift_${version}_${platform}.$ext\$" "$dist/checksums.txt"; then
    echo "release-check: $archive is missing, or not in checksums.txt" >&2; fail=1; continue
  fi
  x="$(mktemp -d)"
  if [[ "$ext" == zip ]]; then unzip -q "$archive" -d "$x"; else tar -xzf "$archive" -C "$x"; fi
  for f in "$bin" LICENSE README.md CHANGELOG.md; do
    [[ -f "$x/$f" ]] || { echo "release-check: $archive lacks $f" >&2; fail=1; }
  done
  if [[ "$platform" == "$host" ]]; then
    got="$("$x/$bin" version)"
    [[ "$got" == "drift v$version "* ]] || { echo "release-check: $platform's drift version says: $got" >&2; fail=1; }
  fi
  # -trimpath keeps -ldflags out of the build info: look for the stamped string itself.
  grep -aqF -- "v$version" "$x/$bin" || { echo "release-check: $platform's drift is not stamped v$version" >&2; fail=1; }
  echo "ok: drift_${version}_${platform}.$ext"
  rm -rf "$x"
done
exit "$fail"
