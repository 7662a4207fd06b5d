package kube

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// ReadOnlyProxy serves the cluster of cfg read-only on loopback until ctx ends, for
// Helm's lookup in the render workers: GET of discovery documents and of objects and
// lists, as lookup sends them, forwarded with cfg's own transport (drift's
// credentials), each answer through modify (nil: as it is). Everything else is
// refused: other verbs, watches, subresources (logs, exec, proxy), connection
// upgrades, and any request without the proxy's random token, so another process on
// the machine cannot borrow drift's credentials through it. It returns the proxy's
// URL and that token.
func ReadOnlyProxy(ctx context.Context, cfg *rest.Config, modify func(*http.Response) error) (url, token string, err error) {
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return "", "", fmt.Errorf("failed to set up lookup's connection to %s: %w", cfg.Host, err)
	}
	upstream, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return "", "", fmt.Errorf("failed to set up lookup's connection to %s: %w", cfg.Host, err)
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(secret)
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = transport
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = modify
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", fmt.Errorf("failed to listen on loopback for lookup's proxy: %w", err)
	}
	srv := &http.Server{Handler: readOnly(token, rp), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + ln.Addr().String(), token, nil
}

// readOnly lets through only what lookup needs.
func readOnly(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "drift lookup proxy: unauthorized", http.StatusUnauthorized)
			return
		}
		if why := lookupRefusal(r); why != "" {
			http.Error(w, "drift lookup proxy: "+why+": Helm's lookup only reads objects", http.StatusForbidden)
			return
		}
		r.Header.Del("Authorization") // the upstream transport sets drift's own
		// JSON, uncompressed by the transport, so Secrets can be read on their way back.
		r.Header.Set("Accept", "application/json")
		r.Header.Del("Accept-Encoding")
		next.ServeHTTP(w, r)
	})
}

// lookupRefusal says why a request is not a read lookup sends, or "" when it is.
func lookupRefusal(r *http.Request) string {
	if r.Method != http.MethodGet {
		return r.Method + " refused"
	}
	if r.Header.Get("Upgrade") != "" || strings.EqualFold(r.Header.Get("Connection"), "upgrade") {
		return "connection upgrades refused"
	}
	if w := r.URL.Query().Get("watch"); w != "" && w != "false" && w != "0" {
		return "watch refused"
	}
	if !readablePath(r.URL.Path) {
		return "path " + r.URL.Path + " refused"
	}
	return ""
}

// readablePath accepts discovery documents and objects or lists of a resource,
// cluster-wide or in a namespace; no subresources, no watch paths.
func readablePath(p string) bool {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	var rest []string
	switch {
	case segs[0] == "api":
		if len(segs) <= 2 {
			return true // /api, /api/v1
		}
		rest = segs[2:]
	case segs[0] == "apis":
		if len(segs) <= 3 {
			return true // /apis, /apis/g, /apis/g/v
		}
		rest = segs[3:]
	default:
		return false
	}
	if rest[0] == "watch" {
		return false
	}
	if rest[0] == "namespaces" && len(rest) > 2 {
		return len(rest) <= 4 // namespaces/ns/resource[/name]
	}
	return len(rest) <= 2 // resource[/name]
}
