package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
)

// check runs a cycle's checks after its load stopped: every acknowledged commit on the new
// primary, the in-doubt ones found, exactly one writable node, the old primary streaming.
// With tpcc, the acknowledged New-Orders are checked instead, and TPC-C's consistency
// conditions (checkTPCC).
func check(ctx context.Context, t *cluster.Topology, ta *tally, dc *result.DrillCycle, tpcc bool) {
	dc.Writable = writable(ctx, t)
	if len(dc.Writable) != 1 {
		dc.Problems = append(dc.Problems, fmt.Sprintf("%d nodes accept writes (%s); want exactly one", len(dc.Writable), strings.Join(dc.Writable, ", ")))
	}
	p := t.Primary()
	streaming, err := streamingTo(ctx, t, p)
	if err != nil {
		dc.Problems = append(dc.Problems, "standbys not read on "+p.Name+": "+err.Error())
	}
	dc.Streaming = streaming
	failedOver := !inPlace(dc.Fault) && dc.To != dc.From // Patroni may restart a killed primary in place
	if failedOver && !slices.Contains(streaming, dc.From) {
		if dc.OldPrimary == "streaming" {
			dc.OldPrimary = "not streaming"
		}
		dc.Problems = append(dc.Problems, fmt.Sprintf("old primary %s is not streaming from %s (%s)", dc.From, p.Name, dc.OldPrimary))
	}
	for _, s := range t.Standbys() {
		if !slices.Contains(streaming, s.Name) {
			dc.NotStreaming = append(dc.NotStreaming, s.Name)
			if !failedOver || s.Name != dc.From { // the old primary's problem is said above
				dc.Problems = append(dc.Problems, fmt.Sprintf("standby %s is not streaming from %s", s.Name, p.Name))
			}
		}
	}
	if tpcc {
		checkTPCC(ctx, t, p, ta, dc)
		return
	}
	present, err := ledgerIDs(ctx, t, p, dc.Cycle)
	if err != nil {
		dc.Problems = append(dc.Problems, "ledger not read on "+p.Name+": "+err.Error())
		return
	}
	ta.countLost(dc, present)
	dc.Checked = true
}

// countLost counts the acknowledged commits missing from present (lost, the first ids
// listed) and the in-doubt ones found in it.
func (ta *tally) countLost(dc *result.DrillCycle, present map[int64]bool) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	var lost, found int64
	for _, id := range ta.acked {
		if !present[id] {
			lost++
			if len(dc.LostIDs) < result.MaxLostIDs {
				dc.LostIDs = append(dc.LostIDs, id)
			}
		}
	}
	for _, id := range ta.doubt {
		if present[id] {
			found++
		}
	}
	dc.Lost, dc.InDoubtPresent = &lost, &found
}

// oldAcks counts the writes that the old primary (port) acknowledged after the fault, and
// after the new primary accepted writes (promoted): any of those is a split brain that
// clients saw, and a check fails naming both nodes.
func (ta *tally) oldAcks(srv server, promoted time.Time, dc *result.DrillCycle) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	for _, a := range ta.acks {
		if !a.srv.is(srv) {
			continue
		}
		dc.OldAcked++
		if !promoted.IsZero() && a.at.After(promoted) {
			dc.OldAckedAfterPromotion++
		}
	}
	if dc.OldAckedAfterPromotion > 0 {
		dc.Problems = append(dc.Problems, fmt.Sprintf("split brain: %s acknowledged %d writes after %s was promoted (the old primary was not fenced)",
			dc.From, dc.OldAckedAfterPromotion, dc.To))
	}
}

// fill copies the tally's counts, errors, timeline, events and first successes after the
// fault into dc; end is the end of the cycle's load.
func (ta *tally) fill(dc *result.DrillCycle, end time.Time) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	dc.Acked = int64(len(ta.acked))
	dc.InDoubt = int64(len(ta.doubt))
	dc.Errors = ta.errors
	dc.Timeline = ta.tl.section()
	dc.Events = slices.Clone(ta.events)
	ta.reroute(dc, ta.listener)
	if !ta.faultAt.IsZero() && !ta.faultMissed {
		var back time.Time
		dc.WritesBlockedSeconds, back = ta.writesBlocked(end)
		if inPlace(dc.Fault) {
			// The primary stays, and writes begun at the fault may be acknowledged before it
			// bites: writes are back when the longest stretch without one ended.
			ta.firstW = back
		}
		if !ta.firstW.IsZero() {
			s := ta.firstW.Sub(ta.faultAt).Seconds()
			dc.WriteBackSeconds = &s
			dc.Events = append(dc.Events, result.DrillEvent{At: ta.firstW, Event: result.EventWritesBack})
		}
		if !ta.firstR.IsZero() {
			s := ta.firstR.Sub(ta.faultAt).Seconds()
			dc.ReadBackSeconds = &s
			dc.Events = append(dc.Events, result.DrillEvent{At: ta.firstR, Event: result.EventReadsBack})
		}
	}
	slices.SortStableFunc(dc.Events, func(a, b result.DrillEvent) int { return a.At.Compare(b.At) })
}

// writable names the running nodes that are not in recovery.
func writable(ctx context.Context, t *cluster.Topology) []string {
	var out []string
	for i := range t.Nodes {
		n := &t.Nodes[i]
		c, err := t.Connect(ctx, n)
		if err != nil {
			continue
		}
		var rec bool
		if c.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&rec) == nil && !rec {
			out = append(out, n.Name)
		}
		c.Close(ctx)
	}
	return out
}

// streamingTo names the standbys that stream from node p.
func streamingTo(ctx context.Context, t *cluster.Topology, p *cluster.Node) ([]string, error) {
	c, err := t.Connect(ctx, p)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT application_name FROM pg_stat_replication WHERE state = 'streaming' ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func ledgerIDs(ctx context.Context, t *cluster.Topology, p *cluster.Node, cycle int) (map[int64]bool, error) {
	c, err := t.Connect(ctx, p)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT id FROM `+LedgerTable+` WHERE cycle = $1`, cycle)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// Whole says in one line whether t is whole — one writable primary, named in its topology,
// and every standby streaming from it — or exactly what is left and how to repair it.
func Whole(ctx context.Context, t *cluster.Topology) string {
	p := t.Primary()
	w := writable(ctx, t)
	var bad []string
	switch {
	case len(w) == 0:
		bad = append(bad, "no node accepts writes (agbench cluster start "+t.Name+", then agbench cluster failover "+t.Name+")")
	case len(w) > 1:
		bad = append(bad, fmt.Sprintf("%d nodes accept writes (%s): split brain; stop all but %s", len(w), strings.Join(w, ", "), p.Name))
	case w[0] != p.Name:
		bad = append(bad, fmt.Sprintf("%s accepts writes but the topology names %s primary", w[0], p.Name))
	}
	for _, n := range t.Nodes {
		if pids := t.StoppedProcesses(n.Name); len(pids) > 0 {
			bad = append(bad, fmt.Sprintf("%s is frozen: processes %s are stopped (resume them with kill -CONT %s)", n.Name, joinInts(pids), joinInts(pids)))
		}
	}
	streaming, _ := streamingTo(ctx, t, p)
	for _, s := range t.Standbys() {
		if !slices.Contains(streaming, s.Name) {
			bad = append(bad, fmt.Sprintf("standby %s is not streaming from %s (agbench cluster start %s; agbench cluster status %s)", s.Name, p.Name, t.Name, t.Name))
		}
	}
	if len(bad) > 0 {
		return "not whole: " + strings.Join(bad, "; ")
	}
	return fmt.Sprintf("whole: primary %s, streaming standbys %s", p.Name, strings.Join(streaming, ", "))
}
