package drill

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
)

// FaultKillStandby is SIGKILL of a standby's postmaster. There is no failover: agbench starts
// the standby again at once, as a service manager would, and waits until it streams. With
// one synchronous standby commits wait for it meanwhile; with ANY 1 of two they go on.
const FaultKillStandby = "kill-standby"

// healWait bounds the wait for a restarted standby to stream again.
const healWait = 60 * time.Second

// inPlace tells the faults that are healed where they happened, with no failover: the
// cycle's checks then want the same primary and every standby streaming from it.
func inPlace(fault string) bool {
	return slices.Contains([]string{FaultKillStandby, FaultWALFull}, fault)
}

// killStandby kills cycle c's standby (the standbys in turn, cycle after cycle), starts it
// again and waits until it streams from the primary.
func killStandby(ctx context.Context, t *cluster.Topology, c *Cycle, dc *result.DrillCycle, p Progress) error {
	standbys := t.Standbys()
	s := standbys[(c.N-1)%len(standbys)].Name
	dc.Target = s
	c.tally.primaryIs(server{port: t.Primary().Port}) // writes come back on the same primary
	dc.FaultAt = time.Now()
	c.tally.fault(dc.FaultAt)
	dc.WALBytesNote = "no failover: the primary stays"
	if err := t.CrashNode(ctx, s); err != nil {
		dc.Healed = "not killed: " + err.Error()
		return fmt.Errorf("kill standby %s: %w", s, err)
	}
	c.tally.event(result.EventDetected, time.Now(), s+"'s processes are gone; starting it again")
	p("cycle %d: killed the postmaster of standby %s (SIGKILL); starting it again", c.N, s)
	if err := t.StartNode(ctx, s); err != nil {
		dc.Healed = "not started: " + err.Error()
		return fmt.Errorf("start standby %s again: %w", s, err)
	}
	if err := t.WaitStreaming(ctx, s, healWait); err != nil {
		dc.Healed = "not streaming: " + err.Error()
		return err
	}
	dc.Healed = "streaming"
	c.tally.event(result.EventHealed, time.Now(), s+" streams again")
	p("cycle %d: standby %s streams again", c.N, s)
	return nil
}
