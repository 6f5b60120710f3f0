package drill

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A primary that answers, but whose login takes longer than a probe's second (each round
// trip 400 ms through a link: a SCRAM login makes three or more), has not failed: the drill
// waits for its first login and times the fault from when it stopped answering, the test's
// own stop three seconds later (from when the stop began). Before, the first probe round's
// login gave up after a second and timed a failover from a primary that was still there;
// and then a question that outlasted a round (two round trips, as pgx prepares it first, at
// a CI load of 30) did the same. The writes come back on the new primary, found by the
// port it gives itself, not its link's.
func TestObserveSlowLoginIsNoFault(t *testing.T) {
	t.Parallel() // owns its cluster: it fails over
	h := clustertest.NewHandmade(t, 1)
	const rtt = 400 * time.Millisecond
	e, _ := linked(t, rtt, clustertest.HandmadeApp+":"+clustertest.HandmadeAppPW, clustertest.HandmadeDatabase,
		link("old", "127.0.0.1", h.Ports[0]), link("new", "127.0.0.1", h.Ports[1]))
	const after = 3 * time.Second
	var stopping time.Time
	failedOver := make(chan error, 1)
	hooks := &Hooks{BeforeFault: func(ctx context.Context, c *Cycle) error {
		go func() {
			time.Sleep(after)
			// The server stops answering during its shutdown, before pg_ctl's wait for it
			// returns: the stop is timed from its start.
			stopping = time.Now()
			if err := h.Stop(ctx, 0); err != nil {
				failedOver <- err
				return
			}
			failedOver <- h.Promote(ctx, 1)
		}()
		return nil
	}}
	// Before, no login within a second ever succeeded, and the new primary was never seen.
	_, res := observeWithFailover(t, e, Options{Hooks: hooks, Between: time.Second, ObserveWait: 2 * time.Minute}, failedOver)
	dc := cycles(t, res)[0]
	t.Logf("fault timed from %s", dc.FaultStart)
	gone := slices.IndexFunc(dc.Events, func(ev result.DrillEvent) bool { return ev.Event == result.EventStoppedAnswering })
	seen := dc.FaultAt
	if gone >= 0 {
		seen = dc.Events[gone].At
	}
	// The primary answered until its stop began: it may be seen gone up to a probe round
	// (a query's round trip and the poll) after that; before it only by a question asked
	// up to a round trip earlier that reached the server after the stop began.
	if seen.Before(stopping.Add(-rtt)) {
		t.Fatalf("the primary was timed as gone %v before its stop began (fault %q, events %+v)", stopping.Sub(seen), dc.FaultStart, dc.Events)
	}
	if dc.To != "new" || lostOf(dc) != 0 || dc.WriteBackSeconds == nil {
		t.Fatalf("cycle %+v", dc)
	}
}
