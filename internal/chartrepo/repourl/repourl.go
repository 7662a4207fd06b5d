// Package repourl reads the URLs of chart repositories and OCI registries the one way
// drift matches them: charts.allow entries, the repository URLs a repository's
// objects name, the URLs of Helm's repositories.yaml, and every URL drift sends a
// request to (an archive an index points at, a redirect's target).
//
// A URL is its scheme, host, port and path, where the port is always explicit (the
// scheme's default when the URL names none) and the path is a list of unescaped
// segments. A URL is refused, rather than read one way by drift and another by a
// server, when it holds anything a server may normalize into another path: a `.` or
// `..` segment (also as `..;x`, `. .` or `...`), a percent-encoded `/`, `\`, `.` or
// `%`, an encoded control or non-ASCII byte, a backslash, an empty segment (`//`), or
// userinfo (`user@host`); and, for a repository URL, a query or fragment.
package repourl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// URL is a chart repository's, registry's or request's URL as drift matches it.
type URL struct {
	// Scheme is "http", "https" or "oci", in lower case.
	Scheme string
	// Host is the host name in lower case, or an IP address (IPv6 without brackets).
	Host string
	// Port is always set: the scheme's default (80 for http, 443 for https and oci)
	// when the URL names none.
	Port string
	// PortGiven says whether the URL named its port.
	PortGiven bool
	// Path is the path's segments, unescaped; none for the root. A trailing slash
	// adds no segment.
	Path []string
}

// ParseRepository reads a repository's URL: a charts.allow entry, a chart's
// repository (http://, https:// or oci://), an entry of Helm's repositories.yaml.
// It has no query and no fragment.
func ParseRepository(raw string) (URL, error) {
	return parse(raw, false)
}

// ParseRequest reads a URL drift sends a request to (http:// or https://): an
// archive's URL from an index, a redirect's target. Its query is allowed and not
// part of what is matched.
func ParseRequest(raw string) (URL, error) {
	return parse(raw, true)
}

func parse(raw string, request bool) (URL, error) {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '\\':
			return URL{}, errors.New("it has a backslash, which some servers read as /")
		case c <= ' ' || c >= 0x7f:
			return URL{}, errors.New("it has a space, a control character or a character outside ASCII (write a host name in its xn-- form, and percent-encode the path)")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the whole URL, userinfo included: not repeated here.
		return URL{}, errors.New("it is not a URL")
	}
	out := URL{Scheme: strings.ToLower(u.Scheme)}
	switch {
	case request && (out.Scheme == "http" || out.Scheme == "https"):
	case !request && (out.Scheme == "http" || out.Scheme == "https" || out.Scheme == "oci"):
	case request:
		return URL{}, fmt.Errorf("its scheme %q is not http or https", u.Scheme)
	default:
		return URL{}, fmt.Errorf("its scheme %q is not http, https or oci", u.Scheme)
	}
	if u.Opaque != "" || !strings.HasPrefix(raw[len(u.Scheme):], "://") {
		return URL{}, errors.New("it names no host (write scheme://host/path)")
	}
	if u.User != nil {
		return URL{}, errors.New("it has userinfo (a user name or password before @): give credentials in the runner's Helm repositories.yaml or registry config instead")
	}
	if !request && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#")) {
		return URL{}, errors.New("it has a query or fragment, which a repository's URL does not")
	}
	rest := raw[len(u.Scheme)+len("://"):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	if strings.Contains(authority, "%") {
		return URL{}, errors.New("its host is percent-encoded")
	}
	if out.Host, err = host(u.Hostname()); err != nil {
		return URL{}, err
	}
	if out.Port, out.PortGiven, err = port(u, authority); err != nil {
		return URL{}, err
	}
	if end := strings.IndexAny(rest, "?#"); end >= 0 {
		rest = rest[:end]
	}
	if out.Path, err = segments(rest); err != nil {
		return URL{}, err
	}
	// What net/http sends is u's path: it must read as the segments checked above.
	if want := "/" + strings.Join(out.Path, "/"); strings.TrimSuffix(u.Path, "/") != strings.TrimSuffix(want, "/") {
		return URL{}, errors.New("its path reads differently once unescaped")
	}
	return out, nil
}

// host checks a host name or IP address and returns it in lower case (an IPv6
// address in its canonical form).
func host(h string) (string, error) {
	if h == "" {
		return "", errors.New("it names no host")
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	h = strings.ToLower(h)
	for _, label := range strings.Split(h, ".") {
		if label == "" {
			return "", fmt.Errorf("its host %q has an empty label", h)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("its host %q is not a host name (letters, digits, - and _ between dots) or an IP address", h)
			}
		}
	}
	return h, nil
}

// port is the URL's port, or its scheme's default; it is refused when the URL writes
// a colon without one, or one out of range.
func port(u *url.URL, authority string) (string, bool, error) {
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(authority, ":") {
			return "", false, errors.New("it has a colon but no port after its host")
		}
		if strings.ToLower(u.Scheme) == "http" {
			return "80", false, nil
		}
		return "443", false, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", false, fmt.Errorf("its port %q is not a port number", p)
	}
	return strconv.Itoa(n), true, nil
}

// segments reads a raw (escaped) path into unescaped segments, refusing what a server
// may normalize into another path.
func segments(raw string) ([]string, error) {
	if raw == "" || raw == "/" {
		return nil, nil
	}
	if !strings.HasPrefix(raw, "/") {
		return nil, errors.New("its path does not start with /")
	}
	parts := strings.Split(strings.TrimSuffix(raw[1:], "/"), "/")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p == "" {
			return nil, errors.New("its path has an empty segment (//), which some servers merge")
		}
		s, err := segment(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// segment unescapes one raw path segment.
func segment(raw string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
			return "", errors.New("its path has a % that is not followed by two hex digits")
		}
		d, _ := strconv.ParseUint(raw[i+1:i+3], 16, 8)
		switch c := byte(d); {
		case c == '/' || c == '\\':
			return "", fmt.Errorf("its path has an encoded separator (%s), which a server may read as /", raw[i:i+3])
		case c == '.':
			return "", fmt.Errorf("its path has an encoded dot (%s), which a server may read as a . or .. segment", raw[i:i+3])
		case c == '%':
			return "", fmt.Errorf("its path has an encoded percent sign (%s), which a server that decodes twice reads as another escape", raw[i:i+3])
		case c < ' ' || c >= 0x7f:
			return "", fmt.Errorf("its path has an encoded control or non-ASCII byte (%s)", raw[i:i+3])
		default:
			b.WriteByte(c)
		}
		i += 2
	}
	s := b.String()
	// "..;x" is ".." to servers that drop path parameters; "..." and ". ." are ".." to
	// servers that trim trailing dots and spaces.
	name, _, _ := strings.Cut(s, ";")
	if strings.Trim(name, ". ") == "" {
		return "", fmt.Errorf("its path has a %q segment, which a server reads as . or .. (or an empty name)", s)
	}
	return s, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Origin is "scheme://host:port".
func (u URL) Origin() string {
	return u.Scheme + "://" + net.JoinHostPort(u.Host, u.Port)
}

// String is the URL in canonical form: its origin and its path escaped.
func (u URL) String() string {
	var b strings.Builder
	b.WriteString(u.Origin())
	for _, s := range u.Path {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// Equal reports whether u and v are the same URL: scheme, host, port and path.
func (u URL) Equal(v URL) bool {
	return u.Origin() == v.Origin() && slices.Equal(u.Path, v.Path)
}

// Under reports whether u is prefix or below it: the same scheme, host and port, and
// prefix's path segments the first of u's. "/charts" has "/charts/stable" under it,
// not "/chartsmore".
func (u URL) Under(prefix URL) bool {
	return u.Origin() == prefix.Origin() && len(u.Path) >= len(prefix.Path) && slices.Equal(u.Path[:len(prefix.Path)], prefix.Path)
}

// Redact is a URL without its userinfo, query and fragment, for messages.
func Redact(raw string) string {
	p, err := url.Parse(raw)
	if err != nil {
		return "(an unreadable URL)"
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}
