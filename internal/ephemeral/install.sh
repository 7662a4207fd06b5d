#!/usr/bin/env bash
# Installs the control-plane binaries drift and envtest need (etcd, kube-apiserver) into a
# directory outside any repository, when they are missing, and prints the directory to use as
# KUBEBUILDER_ASSETS: DRIFT_ASSETS_DIR, else the project's test binaries in drift's cache
# directory (envtest/VERSION, apart from what drift setup installs and records for drift's own
# use in assets/VERSION). drift setup runs this same script (it is embedded in the binary)
# into a new directory of its own, then hashes, moves and records what it built;
# hack/envtest-assets.sh runs it for make test. Nothing is downloaded from outside the Go module
# proxy and Debian:
#   etcd            Debian's etcd-server package
#   kube-apiserver  built from k8s.io/kubernetes through the Go module proxy
# Progress goes to stderr; stdout carries only the directory.
set -euo pipefail

KUBE_VERSION="${DRIFT_KUBE_VERSION:-v1.36.3}"
CACHE="${DRIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drift}"
ASSETS="${DRIFT_ASSETS_DIR:-$CACHE/envtest/$KUBE_VERSION}"
mkdir -p "$ASSETS"

log() { printf 'envtest-assets: %s\n' "$*" >&2; }

install_etcd() {
  [ -x "$ASSETS/etcd" ] && return 0
  local bin
  bin="$(command -v etcd || true)"
  if [ -z "$bin" ]; then
    log "installing etcd from Debian's etcd-server package"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq etcd-server >&2
    bin="$(command -v etcd)"
  fi
  # A copy, not a link: drift setup records the file it installs, and follows no link.
  cp "$bin" "$ASSETS/etcd.tmp" && chmod 755 "$ASSETS/etcd.tmp" && mv "$ASSETS/etcd.tmp" "$ASSETS/etcd"
}

install_kube_apiserver() {
  [ -x "$ASSETS/kube-apiserver" ] && return 0
  local minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
  local staging="v0.${KUBE_VERSION#v1.}"
  local work="$CACHE/build/kube-apiserver-$KUBE_VERSION"
  log "building kube-apiserver $KUBE_VERSION from the Go module proxy (a few minutes, once)"
  rm -rf "$work"; mkdir -p "$work"
  (
    cd "$work"
    export GOFLAGS="-mod=mod" GOTOOLCHAIN=local
    go mod init drift.local/kube-apiserver >/dev/null 2>&1
    local gomod
    gomod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
    {
      echo "require k8s.io/kubernetes $KUBE_VERSION"
      # Every module k8s.io/kubernetes replaces with ./staging/... comes from the proxy instead.
      grep -E '^\s*k8s.io/[^ ]+ => ./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
    } >>go.mod
    printf 'package main\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n' >tools.go
    go mod tidy >&2
    go build -o "$ASSETS/kube-apiserver.tmp" -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
      -X k8s.io/component-base/version.gitMajor=1 \
      -X k8s.io/component-base/version.gitMinor=$minor" k8s.io/kubernetes/cmd/kube-apiserver >&2
  )
  mv "$ASSETS/kube-apiserver.tmp" "$ASSETS/kube-apiserver"
  rm -rf "$work"
}

install_etcd
install_kube_apiserver
# envtest also looks for kubectl in the assets directory; the machine's own is fine.
if [ ! -e "$ASSETS/kubectl" ] && command -v kubectl >/dev/null; then ln -sf "$(command -v kubectl)" "$ASSETS/kubectl"; fi
echo "$ASSETS"
