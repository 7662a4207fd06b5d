package forge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// TestTransportSendsTheTokenOnlyToTheAPIAndRetriesAsTold: the token reaches the API's
// origin and no other, whatever header the client set; an answer Retry calls worth
// another try is sent again after the wait it says, at most MaxTries times.
func TestTransportSendsTheTokenOnlyToTheAPIAndRetriesAsTold(t *testing.T) {
	var seen []string
	tries := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "api:"+r.Header.Get("Private-Token")+":"+r.Header.Get("Authorization"))
		tries++
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "other:"+r.Header.Get("Private-Token")+":"+r.Header.Get("Authorization"))
	}))
	defer other.Close()
	u, _ := url.Parse(api.URL)
	var waits []time.Duration
	tr := &Transport{Next: http.DefaultTransport, Origin: Origin(u), Credentials: []string{"Private-Token", "Authorization"},
		Authorize: func(h http.Header) { h.Set("Private-Token", "secret") },
		Retry: func(resp *http.Response, try int) (time.Duration, bool) {
			return time.Duration(try) * time.Second, resp.StatusCode == http.StatusTooManyRequests
		},
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	client := &http.Client{Transport: tr}
	for _, target := range []string{other.URL, api.URL} {
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Authorization", "Bearer planted")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if seen[0] != "other::" {
		t.Errorf("another origin heard %q", seen[0])
	}
	for _, s := range seen[1:] {
		if s != "api:secret:" {
			t.Errorf("the API heard %q", s)
		}
	}
	if tries != MaxTries || len(waits) != MaxTries-1 || waits[0] != time.Second || waits[2] != 3*time.Second {
		t.Errorf("%d tries, waits %v", tries, waits)
	}
	if Origin(&url.URL{Scheme: "HTTPS", Host: "Example.com"}) != Origin(&url.URL{Scheme: "https", Host: "example.com:443"}) {
		t.Error("the default port is not filled in")
	}
}
