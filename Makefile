# drift: make test (checks + all tests), make demo (the built-in default), make bench.
SHELL := /usr/bin/env bash
GO    ?= go
BIN   := bin/drift
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

export GOTOOLCHAIN := local

.PHONY: all build test check unit fidelity demo bench screenshots clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/drift

## check: formatting, go vet, go mod tidy, actionlint on every workflow
check:
	@out="$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) run $(ACTIONLINT) .github/workflows/*.yml docs/examples/*.yml

## test: checks, then every test against real API servers (binaries installed on first use),
## the fidelity matrix last
test: check
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

## screenshots: the demo's comment and HTML report as the PNGs docs/report.md shows (needs chromium)
screenshots: build
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" hack/screenshots.sh

clean:
	rm -rf bin
