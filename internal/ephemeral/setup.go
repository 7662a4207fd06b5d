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
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/controller-runtime/tools/setup-envtest/remote"
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
	// Env is the environment: DRIFT_CACHE_DIR, XDG_CACHE_HOME, IndexEnv, and what the
	// source build needs (PATH, GOPROXY, ...).
	Env []string
	// Progress hears what is done.
	Progress io.Writer
}

// Setup installs the binaries the ephemeral server needs into the cache directory,
// where they are missing, and returns the directory: downloaded from the envtest
// release index that setup-envtest uses (no Go, no apt-get) and verified against its
// hashes; when the index cannot be reached or does not list the version or platform
// (or with FromSource), built as hack/envtest-assets.sh builds them. An archive that
// does not match its hash is an error, never a reason to build instead.
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
	dir := cacheDir(getenv, version)
	if installed(dir) {
		return dir, nil
	}
	if !opts.Exact && version == KubeVersion {
		// Another patch of the default's minor installed before stands in for it, as
		// the ephemeral server takes it.
		if other := newestCachedPatch(filepath.Dir(dir)); other != "" {
			return other, nil
		}
	}
	if !opts.FromSource {
		index := cmp.Or(getenv(IndexEnv), remote.DefaultIndexURL)
		err := download(ctx, index, version, dir, progress)
		if errors.Is(err, errNotInIndex) && !opts.Exact {
			err = downloadNewestPatch(ctx, index, version, getenv, progress, &dir)
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
	return buildFromSource(ctx, version, opts.Env, progress)
}

// downloadNewestPatch installs the newest patch release of version's minor that the
// index lists instead of version, and points dir at it; errNotInIndex when there is
// none. The ephemeral server finds it (AssetsDir).
func downloadNewestPatch(ctx context.Context, index, version string, getenv func(string) string, progress io.Writer, dir *string) error {
	want, _ := concrete(version)
	alt, ok, err := newestPatch(ctx, index, want)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s, nor any v%d.%d release, for %s/%s is %w", version, want.Major, want.Minor, runtime.GOOS, runtime.GOARCH, errNotInIndex)
	}
	altVersion := "v" + alt.String()
	fmt.Fprintf(progress, "envtest-assets: the envtest release index does not list %s: taking %s, the newest v%d.%d it lists\n", version, altVersion, want.Major, want.Minor)
	*dir = cacheDir(getenv, altVersion)
	if installed(*dir) {
		return nil
	}
	return download(ctx, index, altVersion, *dir, progress)
}

// installed reports whether dir holds both binaries.
func installed(dir string) bool {
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return false
		}
	}
	return true
}

// buildFromSource runs install.sh: etcd from Debian's etcd-server, kube-apiserver
// built from the Go module proxy.
func buildFromSource(ctx context.Context, version string, env []string, progress io.Writer) (string, error) {
	if _, err := exec.LookPath("bash"); err != nil {
		return "", fmt.Errorf("drift setup needs bash to build the binaries: %w", err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("the envtest release index cannot be used and building kube-apiserver needs Go, which is not on PATH: install Go 1.26, or set %s to a directory with etcd and kube-apiserver", AssetsEnv)
	}
	cmd := exec.CommandContext(ctx, "bash", "-s")
	cmd.Stdin = strings.NewReader(installScript)
	cmd.Env = append(append([]string(nil), env...), "DRIFT_KUBE_VERSION="+version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("installing etcd and kube-apiserver failed (see the messages above): %w", err)
	}
	return strings.TrimSpace(out.String()), nil
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
