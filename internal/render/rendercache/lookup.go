package rendercache

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/render/worker"
)

// lookupCluster is a cluster whose objects `lookup` may read, registered with
// Cache.AllowLookup; its proxy starts on first use and stops with the run.
type lookupCluster struct {
	cfg     *rest.Config
	secrets SecretLookup
	// hidden counts the Secrets handed to templates without their data.
	hidden atomic.Int64
	once   sync.Once
	ep     *worker.LookupEndpoint
	err    error
}

func (l *lookupCluster) endpoint(ctx context.Context) (*worker.LookupEndpoint, error) {
	l.once.Do(func() {
		secrets := l.secrets
		secrets.hidden = &l.hidden
		l.ep, l.err = startLookupProxy(ctx, l.cfg, secrets)
	})
	return l.ep, l.err
}

// SecretLookup says what `lookup` hands templates of the cluster's Secrets.
type SecretLookup struct {
	// Reveal hands templates the Secrets' data, as helm upgrade does; otherwise
	// (a pull request, unless the runner opts in) their data and stringData are
	// removed and templates see the rest.
	Reveal bool
	// Values is told every value a Secret handed to a template holds, before the
	// template gets it, so the report's scrubber knows it (nil: told nothing).
	Values func(values ...any)

	hidden *atomic.Int64
}

// startLookupProxy serves the cluster of cfg to render workers through kube's
// read-only proxy (kube.ReadOnlyProxy), Secrets handed on as secrets says.
func startLookupProxy(ctx context.Context, cfg *rest.Config, secrets SecretLookup) (*worker.LookupEndpoint, error) {
	url, token, err := kube.ReadOnlyProxy(ctx, cfg, secrets.filter)
	if err != nil {
		return nil, err
	}
	return &worker.LookupEndpoint{URL: url, Token: token}, nil
}

// maxSecretResponse bounds a response holding Secrets that the proxy reads whole.
const maxSecretResponse = 64 << 20

// filter removes the data of the Secrets a response holds (a Secret, or a list of
// them), or tells Values every value they hold before they are handed on.
func (s SecretLookup) filter(resp *http.Response) error {
	if resp.Request == nil || !secretsPath(resp.Request.URL.Path) {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSecretResponse+1))
	resp.Body.Close()
	if err != nil || len(body) > maxSecretResponse {
		return fmt.Errorf("drift lookup proxy: a Secret response that cannot be read whole")
	}
	if resp.StatusCode == http.StatusOK {
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			return fmt.Errorf("drift lookup proxy: a Secret response that is not JSON")
		}
		s.secretsIn(obj)
		if body, err = json.Marshal(obj); err != nil {
			return err
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding")
	return nil
}

// secretsIn handles the Secret obj, or each Secret of a list.
func (s SecretLookup) secretsIn(obj map[string]any) {
	if items, ok := obj["items"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				s.secret(m)
			}
		}
		return
	}
	s.secret(obj)
}

func (s SecretLookup) secret(obj map[string]any) {
	if !s.Reveal {
		// The keys stay, with empty values, so that templates reading one (grafana's
		// kept password) render instead of failing on a missing key.
		for _, field := range []string{"data", "stringData"} {
			if m, ok := obj[field].(map[string]any); ok {
				for k := range m {
					m[k] = ""
				}
			}
		}
		if s.hidden != nil {
			s.hidden.Add(1)
		}
		return
	}
	if s.Values == nil {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		m, _ := obj[field].(map[string]any)
		for _, v := range m {
			str, _ := v.(string)
			if field == "data" {
				if b, err := base64.StdEncoding.DecodeString(str); err == nil {
					s.Values(string(b))
				}
			}
			s.Values(str)
		}
	}
}

// secretsPath reports whether a readable path names Secrets: the core group's
// secrets resource, cluster-wide or in a namespace, a list or one object.
func secretsPath(p string) bool {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	if len(segs) < 3 || segs[0] != "api" {
		return false
	}
	rest := segs[2:]
	if rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	return rest[0] == "secrets"
}
