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

// AssetsDir finds the directory with etcd and kube-apiserver: KUBEBUILDER_ASSETS (the
// runner's own, used as it is), else drift's cache for KubeVersion, else the newest
// patch release of its minor there (what drift setup installs when the envtest index
// lacks KubeVersion). Binaries in the cache are used only when drift setup installed
// them: its record sealed with the cache's key, each binary's SHA-512 as recorded. It
// says what to do when they are missing or not verified.
func AssetsDir(getenv func(string) string, cache *cachedir.Dir) (string, error) {
	if dir := getenv(AssetsEnv); dir != "" {
		var missing []string
		for _, bin := range binaries {
			if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
				missing = append(missing, bin)
			}
		}
		if len(missing) > 0 {
			return "", fmt.Errorf("the ephemeral API server needs %v, not found in %s (%s): run drift setup, or set %s to a directory with etcd and kube-apiserver", missing, dir, AssetsEnv, AssetsEnv)
		}
		return dir, nil
	}
	dir, err := verified(cache, KubeVersion)
	if err != nil {
		if other := newestCachedPatch(cache); other != "" {
			return other, nil
		}
		return "", fmt.Errorf("the ephemeral API server needs etcd and kube-apiserver %s as drift setup installs them in %s (%v): run drift setup, or set %s to a directory with etcd and kube-apiserver", KubeVersion, assetsCache(cache).Path(), err, AssetsEnv)
	}
	return dir, nil
}

// newestCachedPatch is the directory of assets holding the newest verified patch
// release of KubeVersion's minor, or "".
func newestCachedPatch(cache *cachedir.Dir) string {
	want, _ := concrete(KubeVersion)
	entries, _ := assetsCache(cache).ReadDir(".")
	best, bestDir := -1, ""
	for _, e := range entries {
		v, err := concrete(e.Name())
		if err != nil || !strings.HasPrefix(e.Name(), "v") || v.Major != want.Major || v.Minor != want.Minor || v.Patch <= best {
			continue
		}
		if dir, err := verified(cache, e.Name()); err == nil {
			best, bestDir = v.Patch, dir
		}
	}
	return bestDir
}

// ServiceCIDR is the ephemeral server's range of Service cluster IPs: kubeadm's
// default, instead of envtest's /24, which holds 254 Services and refuses a repository
// with more ("failed to allocate a serviceIP: range is full").
const ServiceCIDR = "10.96.0.0/12"
