package ephemeral

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"sigs.k8s.io/controller-runtime/tools/setup-envtest/remote"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// installScript installs etcd (Debian's etcd-server) and builds kube-apiserver from the
// Go module proxy into the cache; the test script runs the same file.
//
//go:embed install.sh
var installScript string

// SetupOptions say how drift setup installs the binaries.
type SetupOptions struct {
	// KubeVersion is the kube-apiserver version (default KubeVersion).
	KubeVersion string
	// Exact refuses another patch release of the version's minor when the index does
	// not list the version itself (the user asked for it by name). Without it, the
	// default version's newest listed patch stands in for it.
	Exact bool
	// FromSource skips the envtest release index: etcd from Debian, kube-apiserver
	// built from the Go module proxy.
	FromSource bool
	// Env is the environment: IndexEnv, and what the source build needs (PATH,
	// GOPROXY, ...).
	Env []string
	// Cache is drift's cache directory, where the binaries are installed.
	Cache *cachedir.Dir
	// Progress hears what is done.
	Progress io.Writer
}

// Setup installs the binaries the ephemeral server needs into the cache directory,
// where drift did not install them already (verified: its sealed record, their
// SHA-512), and returns the directory: downloaded from the envtest release index that
// setup-envtest uses (no Go, no apt-get) and verified against its hashes; when the
// index cannot be reached or does not list the version or platform (or with
// FromSource), built as hack/envtest-assets.sh builds them. An archive that does not
// match its hash is an error, never a reason to build instead. What it installs it
// records (record.go), so that nothing else in the directory is ever run.
func Setup(ctx context.Context, opts SetupOptions) (string, error) {
	if err := Supported(); err != nil {
		return "", err
	}
	version := cmp.Or(opts.KubeVersion, KubeVersion)
	if _, err := concrete(version); err != nil {
		return "", err
	}
	if !strings.HasPrefix(version, "v") {
		version = "v" + version
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	getenv := lookup(opts.Env)
	if dir, err := verified(opts.Cache, version); err == nil {
		return dir, nil
	}
	if !opts.Exact && version == KubeVersion {
		// Another patch of the default's minor installed before stands in for it, as
		// the ephemeral server takes it.
		if other := newestCachedPatch(opts.Cache); other != "" {
			return other, nil
		}
	}
	if !opts.FromSource {
		index := cmp.Or(getenv(IndexEnv), remote.DefaultIndexURL)
		dir, err := download(ctx, opts.Cache, index, version, progress)
		if errors.Is(err, errNotInIndex) && !opts.Exact {
			dir, err = downloadNewestPatch(ctx, opts.Cache, index, version, progress)
		}
		if err != nil {
			// A mirror's URL may carry credentials, a download's signed query.
			err = redactedError{err}
		}
		switch {
		case err == nil:
			return dir, nil
		case errors.Is(err, errVerify), ctx.Err() != nil:
			return "", err
		}
		fmt.Fprintf(progress, "envtest-assets: the envtest release index gave no binaries (%v): building them instead\n", err)
	}
	return buildFromSource(ctx, opts.Cache, version, opts.Env, progress)
}

// downloadNewestPatch installs the newest patch release of version's minor that the
// index lists instead of version, and returns its directory; errNotInIndex when there
// is none. The ephemeral server finds it (AssetsDir).
func downloadNewestPatch(ctx context.Context, cache *cachedir.Dir, index, version string, progress io.Writer) (string, error) {
	want, _ := concrete(version)
	alt, ok, err := newestPatch(ctx, index, want)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%s, nor any v%d.%d release, for %s/%s is %w", version, want.Major, want.Minor, runtime.GOOS, runtime.GOARCH, errNotInIndex)
	}
	altVersion := "v" + alt.String()
	fmt.Fprintf(progress, "envtest-assets: the envtest release index does not list %s: taking %s, the newest v%d.%d it lists\n", version, altVersion, want.Major, want.Minor)
	if dir, err := verified(cache, altVersion); err == nil {
		return dir, nil
	}
	return download(ctx, cache, index, altVersion, progress)
}

// workDir is a new directory beside the installed binaries, for drift to fill before
// it moves the binaries in (install); remove it after.
func workDir(cache *cachedir.Dir, prefix string) (string, error) {
	assets := assetsCache(cache)
	if err := assets.MkdirAll("."); err != nil {
		return "", err
	}
	return os.MkdirTemp(assets.Path(), prefix)
}

// buildFromSource runs install.sh into a directory of its own: etcd from Debian's
// etcd-server, kube-apiserver built from the Go module proxy; then installs and
// records what it built.
func buildFromSource(ctx context.Context, cache *cachedir.Dir, version string, env []string, progress io.Writer) (string, error) {
	if _, err := exec.LookPath("bash"); err != nil {
		return "", fmt.Errorf("drift setup needs bash to build the binaries: %w", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("the envtest release index cannot be used and building kube-apiserver needs Go, which is not on PATH: install Go 1.26, or set %s to a directory with etcd and kube-apiserver", AssetsEnv)
	}
	work, err := workDir(cache, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	cmd := exec.CommandContext(ctx, "bash", "-s")
	cmd.Stdin = strings.NewReader(installScript)
	cmd.Env = append(append([]string(nil), env...), "DRIFT_KUBE_VERSION="+version, "DRIFT_ASSETS_DIR="+work)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("installing etcd and kube-apiserver failed (see the messages above): %w", err)
	}
	return install(cache, work, version, "built from source (etcd: Debian's etcd-server; kube-apiserver: k8s.io/kubernetes "+version+" from the Go module proxy)")
}

// lookup reads a variable of env, the last setting winning as in a process.
func lookup(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}
