# drift: make test (checks + all tests), make demo (the built-in default), make bench.
SHELL := /usr/bin/env bash
GO    ?= go
BIN   := bin/drift
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
# goreleaser v2.17.0 needs go.digitalxero.dev/go-msix, which the Go module proxy does
# not serve here (403); v2.16.0 builds with Go 1.26 and this module's set.
GORELEASER := github.com/goreleaser/goreleaser/v2@v2.16.0

export GOTOOLCHAIN := local

.PHONY: all build test check unit fidelity demo bench tools screenshots release-snapshot release clean

all: build

## build: drift as releases build it (.goreleaser.yaml: no cgo, paths trimmed), so that
## make bench and make demo measure and run what users install
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/drift

## check: formatting, go vet, go mod tidy, actionlint on every workflow
check:
	@out="$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) run $(ACTIONLINT) .github/workflows/*.yml docs/examples/*.yml
	$(GO) run $(GORELEASER) check

## test: checks, then every test against real API servers (binaries installed on first use,
## Chromium for the HTML report's browser test and cmark-gfm for the markdown's too; the
## GitLab component and pipelines checked with gitlab-ci-local, from npm on first use;
## hack/gitlab runs the component's script), the fidelity matrix last
test: check
	hack/browser.sh >/dev/null
	hack/cmark-gfm.sh >/dev/null
	hack/gitlab-ci-local.sh
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v /internal/fidelity)
	$(MAKE) --no-print-directory fidelity

## fidelity: every applier profile against its real applier; prints the matrix
fidelity:
	@set -o pipefail; KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) test -count=1 -timeout 15m -v ./internal/fidelity \
	  | awk '/^--- FAIL|^    |^FAIL|^ok|^fidelity matrix|^\|/'

demo: build
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" hack/demo.sh

bench: build
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) run ./hack/bench

## tools: every main package under hack/ built into hack/.tools/ (ignored); `go run ./hack/NAME`
## runs one without building it
tools:
	$(GO) build -o hack/.tools/ $$($(GO) list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./hack/...)

## screenshots: the demo's comment and HTML report as the PNGs docs/report.md shows (needs chromium)
screenshots: build
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" hack/screenshots.sh

## release-snapshot: every platform's archive, the checksums and (with a docker daemon)
## the image, into dist/, without publishing; then hack/release-check.sh checks them
release-snapshot:
	skip=publish; docker info >/dev/null 2>&1 || skip=publish,docker; \
	  $(GO) run $(GORELEASER) release --snapshot --clean --skip=$$skip
	hack/release-check.sh dist

## release: what .github/workflows/release.yml runs on a v* tag (GITHUB_TOKEN set)
release:
	$(GO) run $(GORELEASER) release --clean

clean:
	rm -rf bin dist
