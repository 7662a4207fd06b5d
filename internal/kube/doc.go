// Package kube is drift's access to a cluster: connecting with kubectl's flags
// (Connect), the clients of a run (Clients: the run's deadline on every request,
// client-side throttling off, the server's warnings per request), the one retry
// policy (Retry), live reads by GET or by paged LIST (Get, Lists), and what a failed
// request means, read from the server's status (Describe). It knows nothing of
// appliers or of what a preview predicts.
package kube
