package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// Workloads of a drill: the ledger (ledger.go) or TPC-C's terminals (this file).
const (
	WorkloadLedger = "ledger"
	WorkloadTPCC   = "tpcc"
)

// Workloads lists the drill's workloads.
var Workloads = []string{WorkloadLedger, WorkloadTPCC}

// tpccRun is what the tpcc terminals share over a drill: the build's metadata and the run's
// NURand constants.
type tpccRun struct {
	meta *tpcc.Meta
	run  tpcc.Constants
	seed uint64
}

// CheckWorkload refuses, before any cycle, a workload that cannot run on t: with tpcc, a
// database without a ready tpcc schema of this agbench's version (the drill does not build it).
func CheckWorkload(ctx context.Context, t *cluster.Topology, o Options) error {
	if o.Workload != WorkloadTPCC {
		return nil
	}
	_, err := readTPCC(ctx, t)
	return err
}

func readTPCC(ctx context.Context, t *cluster.Topology) (*tpccRun, error) {
	c, err := t.Connect(ctx, t.Primary())
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	m, err := tpcc.RequireReady(ctx, c)
	if err != nil {
		return nil, agerr.BadInputf("--workload tpcc: %w (the drill does not build it: agbench tpcc build --cluster %s --warehouses N)", err, t.Name)
	}
	seed := uint64(time.Now().UnixNano())
	return &tpccRun{meta: m, seed: seed, run: tpcc.RunConstants(tpcc.NewRand(seed, 0), m.C)}, nil
}

// order is an acknowledged (or in-doubt) New-Order: its key in the tally and the row
// that must be on the new primary, its customer and entry time included, so that an order
// id reissued after a lost order is not taken for it.
type order struct {
	w, d, o, c int
	entry      time.Time
}

// key is the order's id in the tally's acked and doubt lists.
func (o order) key() int64 {
	return (int64(o.w)*100+int64(o.d))*10_000_000_000 + int64(o.o)
}

func (o order) String() string { return fmt.Sprintf("%d/%d/%d", o.w, o.d, o.o) }

// ackOrder records an acknowledged New-Order.
func (t *tally) ackOrder(o order, began, at time.Time, srv server) {
	t.mu.Lock()
	t.orders[o.key()] = o
	t.mu.Unlock()
	t.ack(o.key(), began, at, srv)
}

// doubtOrder records a New-Order whose commit got no answer.
func (t *tally) doubtOrder(o order) {
	t.mu.Lock()
	t.orders[o.key()] = o
	t.mu.Unlock()
}

// tpccConnect connects as the tpcc workload's sessions do (its search path and types).
func tpccConnect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := tpcc.ConnConfig(url, "--workload tpcc")
	if err != nil {
		return nil, err
	}
	return tpcc.Connect(ctx, cfg)
}

// terminal is TPC-C terminal w of the cycle: client mode, no keying or think time, its home
// warehouse and district spread as tpcc run spreads them. Committed read-write transactions
// are the tally's writes; each acknowledged New-Order is kept for the checks; the read-only
// ones (Order-Status, Stock-Level) and the New-Orders rolled back by their unused item (a
// rollback waits for no standby) count only in the step's operations.
func (l *load) terminal(ctx context.Context, w int, h *measure.Handle) {
	defer l.wg.Done()
	s := &session{url: l.writeURL, op: OpWrite, tally: l.tally, h: h, connect: tpccConnect}
	defer s.drop()
	m := l.tpcc.meta
	g := tpcc.NewRand(l.tpcc.seed, uint64(l.cycle)*1000+uint64(w)+1)
	deck := tpcc.NewDeck(g)
	sess := tpcc.Session{Mode: tpcc.ModeClient, T: &tpcc.Terminal{G: g, C: l.tpcc.run, Warehouses: m.Warehouses,
		HomeW: w%m.Warehouses + 1, HomeD: (w/m.Warehouses)%tpcc.DistrictsPerWH + 1}}
	for l.running(ctx) {
		c := s.get(ctx)
		if c == nil {
			continue
		}
		sess.Primary = c
		k := deck.Next()
		began := time.Now()
		octx, cancel := context.WithTimeout(ctx, l.commitWait)
		out, err := sess.Run(octx, k)
		cancel()
		done := time.Now()
		no := order{w: sess.NO.W, d: sess.NO.D, o: sess.NO.OrderID, c: sess.NO.C, entry: sess.NO.EntryD}
		isOrder := k == tpcc.NewOrder && !out.RolledBack && no.o != 0
		if err == nil {
			h.Record(measure.Sample{Op: OpWrite, Latency: done.Sub(began)})
			switch {
			case isOrder:
				l.tally.ackOrder(no, began, done, s.srv)
			case !k.ReadOnly() && !out.RolledBack: // a rollback waits for no standby: not a write back
				l.tally.acknowledged(began, done, s.srv)
			}
			continue
		}
		if ctx.Err() != nil { // interrupted: the commit's fate is the checks' to find
			if isOrder {
				l.tally.doubtOrder(no)
			}
			l.tally.fail(OpWrite, stateClient, err, isOrder, no.key())
			return
		}
		state, lost, doubt := classify(err)
		doubt = doubt && isOrder // only a New-Order's fate is checked
		if doubt {
			l.tally.doubtOrder(no)
		}
		l.tally.fail(OpWrite, state, err, doubt, no.key())
		h.Record(measure.Sample{Op: OpWrite, Latency: done.Sub(began), Err: true})
		if lost || c.IsClosed() {
			s.drop()
		}
	}
}

// checkTPCC is a tpcc cycle's checks on the primary p: every acknowledged New-Order's row is
// there (the in-doubt ones found), and TPC-C's consistency conditions hold.
func checkTPCC(ctx context.Context, t *cluster.Topology, p *cluster.Node, ta *tally, dc *result.DrillCycle) {
	dt := &result.DrillTPCC{}
	dc.TPCC = dt
	c, err := t.Connect(ctx, p)
	if err != nil {
		dc.Problems = append(dc.Problems, "orders not read on "+p.Name+": "+err.Error())
		dt.ChecksError = err.Error()
		return
	}
	defer c.Close(ctx)
	ta.mu.Lock()
	orders := make([]order, 0, len(ta.orders))
	for _, o := range ta.orders {
		orders = append(orders, o)
	}
	dt.Transactions = ta.rwAcks
	ta.mu.Unlock()
	present, err := ordersPresent(ctx, c, orders)
	if err != nil {
		dc.Problems = append(dc.Problems, "orders not read on "+p.Name+": "+err.Error())
	} else {
		ta.countLost(dc, present)
		for _, id := range dc.LostIDs {
			dt.LostOrders = append(dt.LostOrders, ta.orderOf(id).String())
		}
		dc.LostIDs = nil
		dc.Checked = true
	}
	res, err := tpcc.Check(ctx, c)
	if err != nil {
		dt.ChecksError = err.Error()
	}
	for _, r := range res {
		dt.Checks = append(dt.Checks, result.DrillCondition{Clause: r.Clause, Name: r.Name, Violations: r.Violations})
	}
	if err != nil {
		dt.Checks = nil
	}
	for _, f := range tpccFailed(dt) {
		dc.Problems = append(dc.Problems, f+" on "+p.Name)
	}
}

func (t *tally) orderOf(key int64) order {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.orders[key]
}

// ordersPresent returns the keys of the orders whose row is on c's server, with the same
// customer and entry time.
func ordersPresent(ctx context.Context, c *pgx.Conn, orders []order) (map[int64]bool, error) {
	n := len(orders)
	ws, ds, os, cs := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	es := make([]time.Time, n)
	for i, o := range orders {
		ws[i], ds[i], os[i], cs[i], es[i] = int32(o.w), int32(o.d), int32(o.o), int32(o.c), o.entry
	}
	rows, err := c.Query(ctx, `SELECT u.w, u.d, u.o FROM unnest($1::int[], $2::int[], $3::int[], $4::int[], $5::timestamp[]) AS u(w, d, o, c, e)
		JOIN tpcc.orders ON o_w_id = u.w AND o_d_id = u.d AND o_id = u.o AND o_c_id = u.c AND o_entry_d = u.e`, ws, ds, os, cs, es)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for rows.Next() {
		var o order
		if err := rows.Scan(&o.w, &o.d, &o.o); err != nil {
			return nil, err
		}
		out[o.key()] = true
	}
	return out, rows.Err()
}

// tpccFailed lists the conditions that did not hold ("3.3.2.2 (D_NEXT_O_ID - 1 = ...): 3 rows"),
// or why they were not checked.
func tpccFailed(d *result.DrillTPCC) []string {
	if d.ChecksError != "" {
		return []string{"consistency conditions not checked: " + d.ChecksError}
	}
	if len(d.Checks) == 0 {
		return []string{"consistency conditions not checked"}
	}
	var out []string
	for _, c := range d.Checks {
		if c.Violations != 0 {
			out = append(out, fmt.Sprintf("consistency condition %s (%s) broken by %d rows", c.Clause, c.Name, c.Violations))
		}
	}
	return out
}
