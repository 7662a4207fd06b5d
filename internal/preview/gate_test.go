package preview

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/entry"
	"github.com/drift-gitops/drift/internal/object"
)

// recordingSink records what it learns; the gate's tests record the takes beside.
type recordingSink struct {
	mu     sync.Mutex
	events []string
}

func (s *recordingSink) record(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *recordingSink) Learn(k entry.Known)                    { s.record("learn " + k.Target) }
func (s *recordingSink) Sensitive(object.ID, config.Rules) bool { return false }
func (s *recordingSink) Take(entry.One) (entry.Built, bool)     { return entry.Built{}, true }

func (s *recordingSink) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// TestNothingIsTakenBeforeEveryPartyArrived: takes handed to the gate, queued or
// held by a party, run only once the last party arrived, after the sink learnt what
// every party knows; once open, a take runs at once.
func TestNothingIsTakenBeforeEveryPartyArrived(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	opened := 0
	g := newSecretsFirst(sink, func() { opened++ }, 2)
	g.take(func() { sink.record("take early") })
	g.arrive([]entry.Known{{Target: "a"}}, []func(){func() { sink.record("take a's secret") }})
	if got := sink.seen(); !slices.Equal(got, []string{"learn a"}) || opened != 0 {
		t.Fatalf("before the last party: %q, opened %d times", got, opened)
	}
	g.arrive([]entry.Known{{Target: "b"}}, nil)
	got := sink.seen()
	if len(got) != 4 || got[0] != "learn a" || got[1] != "learn b" || opened != 1 {
		t.Fatalf("after the last party: %q, opened %d times", got, opened)
	}
	if takes := got[2:]; !slices.Contains(takes, "take early") || !slices.Contains(takes, "take a's secret") {
		t.Fatalf("the queued and held takes did not run: %q", got)
	}
	g.take(func() { sink.record("take late") })
	if got := sink.seen(); got[len(got)-1] != "take late" {
		t.Fatalf("a take once open did not run at once: %q", got)
	}
}

// TestTheQueueIsBoundedUntilTheGateOpens: past maxQueued takes, the one handing a
// result waits until the last party arrives, then every take runs.
func TestTheQueueIsBoundedUntilTheGateOpens(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	g := newSecretsFirst(sink, nil, 1)
	for range maxQueued - 1 {
		g.take(func() { sink.record("take") })
	}
	returned := make(chan struct{})
	go func() {
		g.take(func() { sink.record("take") })
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("the take past the bound returned before the gate opened")
	case <-time.After(200 * time.Millisecond):
	}
	g.arrive(nil, nil)
	<-returned
	if n := len(sink.seen()); n != maxQueued {
		t.Fatalf("%d takes ran, want %d", n, maxQueued)
	}
}
