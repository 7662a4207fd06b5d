package ephemeral

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// KubeVersion is the kube-apiserver version drift setup installs.
const KubeVersion = "v1.36.3"

// AssetsEnv is the envtest convention for the directory holding the binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// AssetsDir finds the directory with etcd and kube-apiserver: KUBEBUILDER_ASSETS,
// else drift's cache directory for KubeVersion, else the newest patch release of its
// minor there (what drift setup installs when the envtest index lacks KubeVersion). It
// says what to do when they are missing.
func AssetsDir(getenv func(string) string) (string, error) {
	dir := getenv(AssetsEnv)
	from := AssetsEnv
	if dir == "" {
		dir = CacheDir(getenv)
		from = "drift's cache"
		if !installed(dir) {
			if other := newestCachedPatch(filepath.Dir(dir)); other != "" {
				dir = other
			}
		}
	}
	var missing []string
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the ephemeral API server needs %v, not found in %s (%s): run drift setup, or set %s to a directory with etcd and kube-apiserver", missing, dir, from, AssetsEnv)
	}
	return dir, nil
}

// newestCachedPatch is the directory of assets holding the newest installed patch
// release of KubeVersion's minor, or "".
func newestCachedPatch(assets string) string {
	want, _ := concrete(KubeVersion)
	entries, _ := os.ReadDir(assets)
	best, bestDir := -1, ""
	for _, e := range entries {
		v, err := concrete(e.Name())
		if err != nil || !strings.HasPrefix(e.Name(), "v") || v.Major != want.Major || v.Minor != want.Minor || v.Patch <= best {
			continue
		}
		if dir := filepath.Join(assets, e.Name()); installed(dir) {
			best, bestDir = v.Patch, dir
		}
	}
	return bestDir
}

// CacheDir is where drift setup installs the binaries of KubeVersion.
func CacheDir(getenv func(string) string) string { return cacheDir(getenv, KubeVersion) }

// cacheDir is where drift setup installs the binaries of version.
func cacheDir(getenv func(string) string, version string) string {
	return cachedir.Path(getenv, "assets", version)
}

// ServiceCIDR is the ephemeral server's range of Service cluster IPs: kubeadm's
// default, instead of envtest's /24, which holds 254 Services and refuses a repository
// with more ("failed to allocate a serviceIP: range is full").
const ServiceCIDR = "10.96.0.0/12"
