package bitbucket

import "net/http"

// httpClient is the client's HTTP client, for the tests of what it sends where.
func (c *client) httpClient() *http.Client { return c.http }
