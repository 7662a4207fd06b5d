package ephemeral

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"sigs.k8s.io/controller-runtime/tools/setup-envtest/remote"
	"sigs.k8s.io/controller-runtime/tools/setup-envtest/versions"

	"github.com/drift-gitops/drift/internal/cachedir"
)

// IndexEnv names another envtest release index than setup-envtest's own (a mirror).
const IndexEnv = "DRIFT_ENVTEST_INDEX_URL"

// errNotInIndex marks a version or platform the index does not list: the source build
// can still make it.
var errNotInIndex = errors.New("not in the envtest release index")

// errVerify marks an archive that does not match the index's hash: never used.
var errVerify = errors.New("does not match the index")

// download installs etcd and kube-apiserver of version into the cache from the
// envtest release index (setup-envtest's, through its library), verified against the
// index's SHA-512, and returns their directory. Nothing is installed unless the
// archive verified and held both.
func download(ctx context.Context, cache *cachedir.Dir, indexURL, version string, progress io.Writer) (string, error) {
	want, err := concrete(version)
	if err != nil {
		return "", err
	}
	client := &remote.HTTPClient{IndexURL: indexURL}
	item := versions.PlatformItem{Platform: versions.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}}
	if err := client.FetchSum(ctx, want, &item); err != nil {
		if strings.Contains(err.Error(), "unable to find archive") {
			return "", fmt.Errorf("%s for %s/%s is %w", version, runtime.GOOS, runtime.GOARCH, errNotInIndex)
		}
		return "", err
	}
	fmt.Fprintf(progress, "envtest-assets: downloading etcd and kube-apiserver %s for %s/%s from the envtest release index\n", version, runtime.GOOS, runtime.GOARCH)
	// The archive is unpacked beside the installed binaries, so that they move in by
	// rename.
	tmp, err := workDir(cache, ".download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	archive, err := os.Create(filepath.Join(tmp, "envtest.tar.gz"))
	if err != nil {
		return "", err
	}
	err = client.GetVersion(ctx, want, item, archive)
	if cerr := archive.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if strings.Contains(err.Error(), "checksum mismatch") {
			return "", fmt.Errorf("the envtest archive for %s %w: %v", version, errVerify, err)
		}
		return "", err
	}
	if err := extract(archive.Name(), tmp); err != nil {
		return "", fmt.Errorf("the envtest archive for %s: %w", version, err)
	}
	return install(cache, tmp, version, "the envtest release index (the archive verified against its SHA-512)")
}

// newestPatch returns the newest version of want's minor that the index lists for
// this platform, if any.
func newestPatch(ctx context.Context, indexURL string, want versions.Concrete) (versions.Concrete, bool, error) {
	client := &remote.HTTPClient{IndexURL: indexURL}
	sets, err := client.ListVersions(ctx) // newest first
	if err != nil {
		return versions.Concrete{}, false, err
	}
	here := versions.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	for _, set := range sets {
		if set.Version.Major != want.Major || set.Version.Minor != want.Minor {
			continue
		}
		for _, p := range set.Platforms {
			if p.Platform.Matches(here) {
				return set.Version, true, nil
			}
		}
	}
	return versions.Concrete{}, false, nil
}

// redactedError is err with the userinfo and the query of every URL in its message
// left out: setup-envtest's errors quote the URLs they fetched.
type redactedError struct{ err error }

func (r redactedError) Error() string { return redactURLs(r.err.Error()) }
func (r redactedError) Unwrap() error { return r.err }

var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'()<>]+`)

// redactURLs drops the userinfo and query of the URLs in s.
func redactURLs(s string) string {
	return urlInText.ReplaceAllStringFunc(s, func(raw string) string {
		u, err := url.Parse(strings.TrimRight(raw, ".,;:"))
		if err != nil {
			return "(a URL)"
		}
		if u.User == nil && u.RawQuery == "" {
			return raw
		}
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		return u.String()
	})
}

// extract writes the archive's etcd and kube-apiserver into dir; anything else in it
// is left out, and both must be there.
func extract(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	found := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := path.Base(h.Name)
		if h.Typeflag != tar.TypeReg || (name != "etcd" && name != "kube-apiserver") {
			continue
		}
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, io.LimitReader(tr, 1<<30))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		found[name] = true
	}
	if !found["etcd"] || !found["kube-apiserver"] {
		return fmt.Errorf("it holds no etcd or no kube-apiserver")
	}
	return nil
}

// concrete parses "v1.36.3" (or "1.36.3").
func concrete(version string) (versions.Concrete, error) {
	var c versions.Concrete
	if _, err := fmt.Sscanf(strings.TrimPrefix(version, "v"), "%d.%d.%d", &c.Major, &c.Minor, &c.Patch); err != nil || c.String() != strings.TrimPrefix(version, "v") {
		return c, fmt.Errorf("--kube-version %q is not a Kubernetes version such as %s", version, KubeVersion)
	}
	return c, nil
}
