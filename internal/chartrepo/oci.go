package chartrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/registry"

	"github.com/drift-gitops/drift/internal/chartrepo/repourl"
)

// ociComponent is a path component of an OCI repository name, as the distribution
// spec defines it.
var ociComponent = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)

// ociLocation is where a registry's chart is: oci://host[:port]/path/name, read by
// repourl, every segment of its path a component of an OCI repository name.
func ociLocation(ref Ref) (repourl.URL, error) {
	loc, err := repourl.ParseRepository(strings.TrimSuffix(ref.RepoURL, "/") + "/" + ref.Name)
	if err != nil {
		return repourl.URL{}, fmt.Errorf("%s: the chart's registry path is refused: %v", ref, err)
	}
	for _, s := range loc.Path {
		if !ociComponent.MatchString(s) {
			return repourl.URL{}, fmt.Errorf("%s: the chart's registry path has %q, which is not part of an OCI repository name (lower-case letters and digits, with . _ or - between them)", ref, s)
		}
	}
	return loc, nil
}

// registryAPI is the URL of the registry API for the repositories under an oci://
// location: https://host:port/v2/path (http:// with plainHTTP; the default port is
// that of the scheme used).
func registryAPI(loc repourl.URL, plainHTTP bool) repourl.URL {
	api := repourl.URL{Scheme: "https", Host: loc.Host, Port: loc.Port, PortGiven: loc.PortGiven, Path: append([]string{"v2"}, loc.Path...)}
	if plainHTTP {
		api.Scheme = "http"
		if !loc.PortGiven {
			api.Port = "80"
		}
	}
	return api
}

// fetchOCI pulls a chart from an OCI registry with Helm's registry client, which
// checks every blob against its descriptor's digest; the chart layer is verified
// against the manifest's digest for it once more before it is stored. loc is the
// chart's location (ociLocation), allowed.
//
// The registry client finds the runner's credentials by the registry's host and
// port, and sends them to that registry and to the token service it names in its
// challenge (the distribution protocol); a redirect drops them unless every hop
// stays under the chart repository's API URL (client).
func (f *Fetcher) fetchOCI(_ context.Context, ref Ref, loc repourl.URL) (*Chart, error) {
	repository := strings.TrimSuffix(strings.TrimPrefix(ref.RepoURL, "oci://"), "/") + "/" + ref.Name
	scope := registryAPI(loc, f.opts.PlainHTTP)
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(f.client(&scope)), registry.ClientOptWriter(io.Discard)}
	if f.opts.RegistryConfig != "" {
		opts = append(opts, registry.ClientOptCredentialsFile(f.opts.RegistryConfig))
	}
	if f.opts.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: the registry client: %v", ref, err)
	}
	version := ref.Version
	if !isExact(version) {
		tags, err := client.Tags(repository)
		if err != nil {
			return nil, fmt.Errorf("%s: listing its tags: %v", ref, err)
		}
		for i, t := range tags {
			tags[i] = strings.ReplaceAll(t, "_", "+") // Helm writes + as _ in tags
		}
		if version, err = highest(ref.Version, tags); err != nil {
			return nil, fmt.Errorf("%s: %v", ref, err)
		}
	}
	res, err := client.Pull(repository+":"+strings.ReplaceAll(version, "+", "_"), registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("%s: pull: %v", ref, err)
	}
	if int64(len(res.Chart.Data)) > maxChartBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: refused", ref, maxChartBytes>>20)
	}
	sum := sha256.Sum256(res.Chart.Data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != res.Chart.Digest {
		return nil, fmt.Errorf("%s: the chart layer's digest %s does not match the manifest's %s: refused", ref, got, res.Chart.Digest)
	}
	repo, _ := repourl.ParseRepository(ref.RepoURL) // read once already by fetch
	return f.store(repo, ref.Name, version, res.Chart.Data)
}
