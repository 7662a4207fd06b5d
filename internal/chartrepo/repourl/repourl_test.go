package repourl

import (
	"strings"
	"testing"
)

// TestURLsAServerMayReadAsAnotherPathAreRefused: every form of a dot segment, an
// encoded separator or dot, a backslash and userinfo is refused with a message
// saying which, rather than matched or not.
func TestURLsAServerMayReadAsAnotherPathAreRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, says string }{
		{"http://host/allowed/%2e%2e/other", "encoded dot (%2e)"},
		{"http://host/allowed/%2E%2E/other", "encoded dot (%2E)"},
		{"http://host/allowed/.%2e/other", "encoded dot (%2e)"},
		{"http://host/allowed/%2e./other", "encoded dot (%2e)"},
		{"http://host/allowed/%2e/other", "encoded dot (%2e)"},
		{"http://host/allowed/x%2ey", "encoded dot (%2e)"},
		{"http://host/allowed%2f..%2fother", "encoded separator (%2f)"},
		{"http://host/allowed%2F..%2Fother", "encoded separator (%2F)"},
		{"http://host/allowed/..%5cother", "encoded separator (%5c)"},
		{"http://host/allowed/%5C..%5Cother", "encoded separator (%5C)"},
		{"http://host/allowed/%252e%252e/other", "encoded percent sign (%25)"},
		{"http://host/allowed/%00/x", "encoded control or non-ASCII byte (%00)"},
		{"http://host/allowed/%c0%ae%c0%ae/other", "encoded control or non-ASCII byte (%c0)"},
		{"http://host/allowed/../other", `".." segment`},
		{"http://host/allowed/./x", `"." segment`},
		{"http://host/allowed/..;/other", `"..;" segment`},
		{"http://host/allowed/...", `"..." segment`},
		{"http://host/allowed/..%20/other", `".. " segment`},
		{"http://host/allowed//other", "empty segment (//)"},
		{`http://host/allowed\..\other`, "backslash"},
		{"http://host/allowed/ä", "outside ASCII"},
		{"http://host/allowed/a b", "a space"},
		{"http://robot:s3cr3t@host/allowed", "userinfo"},
		{"http://@host/allowed", "userinfo"},
		{"http://host:/allowed", "a colon but no port"},
		{"http://host:99999/allowed", `port "99999"`},
		{"http://ho%73t/allowed", "not a URL"},
		{"http:host/allowed", "names no host"},
		{"http:///allowed", "names no host"},
		{"ftp://host/allowed", `scheme "ftp"`},
		{"http://host/allowed?x=1", "query or fragment"},
		{"http://host/allowed?", "query or fragment"},
		{"http://host/allowed#x", "query or fragment"},
		{"http://host/allowed/%zz", "not a URL"},
		{"http://ho..st/allowed", "empty label"},
	} {
		_, err := ParseRepository(c.url)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want it refused saying %q", c.url, err, c.says)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the userinfo in the error: %v", c.url, err)
		}
	}
	// A request's URL may have a query (a signed download), never the rest.
	if _, err := ParseRequest("https://cdn.example/blobs/x.tgz?sig=abc"); err != nil {
		t.Errorf("a query on a request: %v", err)
	}
	for _, u := range []string{"https://cdn.example/a/%2e%2e/x.tgz?sig=abc", "oci://host/x", "https://u@cdn.example/x"} {
		if _, err := ParseRequest(u); err == nil {
			t.Errorf("request %s: not refused", u)
		}
	}
}

// TestMatchingIsByOriginAndWholeSegments: scheme, host and port (the default made
// explicit) compare exactly, host names without case; the entry's path is a prefix
// of whole, unescaped segments.
func TestMatchingIsByOriginAndWholeSegments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url, entry string
		under      bool
	}{
		{"http://host/allowed", "http://host/allowed", true},
		{"http://host/allowed/", "http://host/allowed", true},
		{"http://host/allowed/sub/deeper", "http://host/allowed", true},
		{"http://host/allowed", "http://host/allowed/", true},
		{"HTTP://HOST/allowed", "http://host/allowed", true},
		{"http://host:80/allowed", "http://host/allowed", true},
		{"https://host:443/allowed", "https://host/allowed", true},
		{"http://host:080/allowed", "http://host/allowed", true},
		{"oci://host:443/org/chart", "oci://host/org", true},
		{"http://host/%61llowed", "http://host/allowed", true},
		{"http://[::1]:8080/x", "http://[0:0::1]:8080", true},
		{"http://host/anything", "http://host", true},
		{"http://host/allowedmore", "http://host/allowed", false},
		{"http://host/Allowed", "http://host/allowed", false},
		{"http://host", "http://host/allowed", false},
		{"http://host:8080/allowed", "http://host/allowed", false},
		{"http://host:8080/allowed", "http://host:8081/allowed", false},
		{"https://host/allowed", "http://host/allowed", false},
		{"http://host:443/allowed", "https://host/allowed", false},
		{"oci://host/allowed", "https://host/allowed", false},
		{"http://sub.host/allowed", "http://host/allowed", false},
		{"http://host.evil/allowed", "http://host/allowed", false},
	} {
		u, err := ParseRepository(c.url)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		e, err := ParseRepository(c.entry)
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		if got := u.Under(e); got != c.under {
			t.Errorf("%s under %s: %v, want %v", c.url, c.entry, got, c.under)
		}
	}
	u, _ := ParseRepository("HTTPS://Charts.Example/a%20b/")
	if got := u.String(); got != "https://charts.example:443/a%20b" {
		t.Errorf("canonical form: %s", got)
	}
	if got := Redact("https://user:pass@charts.example/x?token=t#f"); got != "https://charts.example/x" {
		t.Errorf("redacted: %s", got)
	}
}
