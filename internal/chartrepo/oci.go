package chartrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"helm.sh/helm/v3/pkg/registry"
)

// fetchOCI pulls a chart from an OCI registry with Helm's registry client, which
// checks every blob against its descriptor's digest; the chart layer is verified
// against the manifest's digest for it once more before it is stored.
func (f *Fetcher) fetchOCI(_ context.Context, ref Ref) (*Chart, error) {
	repository := strings.TrimSuffix(strings.TrimPrefix(ref.RepoURL, "oci://"), "/") + "/" + ref.Name
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(f.client()), registry.ClientOptWriter(io.Discard)}
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
	return f.store(ref.RepoURL, ref.Name, version, res.Chart.Data)
}
