package dryrun

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/drift-gitops/drift/internal/applier/kubectlssa"
	"github.com/drift-gitops/drift/internal/kube"
	"github.com/drift-gitops/drift/internal/reason"
	"github.com/drift-gitops/drift/internal/render"
)

// TestRunEndingMidwayMarksTheRestNotChecked: the run's deadline passes while the
// first object is at the server (a proxy ends the run when it sees that object's dry
// run, and holds the request until the client gives up). That object is an error of
// its own; the object after it, never sent, is not-checked with the run's cause; no
// object is reported as if it had been checked.
func TestRunEndingMidwayMarksTheRestNotChecked(t *testing.T) {
	rp, err := testEnv(t).ReverseProxy()
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := context.WithCancelCause(context.Background())
	defer end(nil)
	timedOut := errors.New("timed out after 3s")
	var patchedB bool
	released := make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/deadline-a"):
			end(timedOut)
			select {
			case <-r.Context().Done():
			case <-released:
			}
			return
		case strings.HasSuffix(r.URL.Path, "/configmaps/deadline-b"):
			patchedB = patchedB || r.Method == http.MethodPatch
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	defer close(released) // before Close, which waits for the handlers
	clients, err := kube.NewClientsWithin(ctx, &rest.Config{Host: proxy.URL}, 1)
	if err != nil {
		t.Fatal(err)
	}
	objs := []render.Object{
		{Obj: configMap("deadline-a", "x"), Source: "a.yaml", Doc: 1},
		{Obj: configMap("deadline-b", "y"), Source: "b.yaml", Doc: 1},
	}
	results := Run(ctx, clients, objs, Options{Applier: kubectlssa.New(), Concurrency: 1})
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	a, b := results[0], results[1]
	if a.Err == nil || a.Merged != nil {
		t.Errorf("the object at the server when the run ended: err %+v, merged %v; want an error", a.Err, a.Merged)
	}
	if b.Err == nil || b.Err.Reason != reason.NotChecked || !strings.Contains(b.Err.Message, "timed out after 3s") {
		t.Errorf("the object after it: %+v; want not-checked naming the run's cause", b.Err)
	}
	if patchedB {
		t.Error("the object after the deadline was sent")
	}
}
