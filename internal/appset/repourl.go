package appset

import (
	"net/url"
	"regexp"
	"strings"
)

// sameRepo says whether a git generator's repoURL names the repository previewed,
// known by urls. Two URLs name the same repository when Argo CD's
// git.SameURL says so (lower case, no trailing ".git", scp-like
// git@host:org/repo read as ssh://git@host/org/repo), or when they name the same
// host and path whatever the scheme, user, default port and trailing '/' (the
// https and the ssh URL of one repository).
func sameRepo(repoURL string, urls []string) bool {
	for _, u := range urls {
		if sameURL(repoURL, u) {
			return true
		}
		if a, b := repoKey(repoURL), repoKey(u); a != "" && a == b {
			return true
		}
	}
	return false
}

var sshURL = regexp.MustCompile("^(ssh://)?([^/:]*?)@[^@]+$")

// normalizeGitURL is Argo CD's git.NormalizeGitURL.
func normalizeGitURL(repo string) string {
	repo = strings.ToLower(strings.TrimSpace(repo))
	if sshURL.MatchString(repo) && !strings.HasPrefix(repo, "ssh://") {
		repo = "ssh://" + strings.Replace(repo, ":", "/", 1)
	}
	repo = strings.TrimSuffix(repo, ".git")
	u, err := url.Parse(repo)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.String(), "ssh://")
}

// sameURL is Argo CD's git.SameURL.
func sameURL(a, b string) bool {
	na, nb := normalizeGitURL(a), normalizeGitURL(b)
	if na == "" {
		na = a
	}
	if nb == "" {
		nb = b
	}
	return na != "" && nb != "" && na == nb
}

// repoKey is host/path of a repository URL, lower case, without scheme, user,
// default port, trailing '/' and ".git": "" when it cannot be read.
func repoKey(raw string) string {
	s := strings.ToLower(strings.TrimSpace(raw))
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "://") {
		// scp-like: [user@]host:path
		host, p, ok := strings.Cut(s, ":")
		if !ok || strings.Contains(host, "/") {
			return ""
		}
		if i := strings.LastIndex(host, "@"); i >= 0 {
			host = host[i+1:]
		}
		s = "ssh://" + host + "/" + strings.TrimPrefix(p, "/")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	host := u.Hostname()
	if port := u.Port(); port != "" && !defaultPort(u.Scheme, port) {
		host += ":" + port
	}
	p := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), ".git")
	p = strings.TrimRight(p, "/")
	if p == "" {
		return ""
	}
	return host + p
}

func defaultPort(scheme, port string) bool {
	switch scheme {
	case "https":
		return port == "443"
	case "http":
		return port == "80"
	case "ssh", "git+ssh":
		return port == "22"
	case "git":
		return port == "9418"
	}
	return false
}
