package tpcc

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/workload"
)

// ParamRouting is the step parameter that --compare routing=off,on varies: "on" sends the
// read-intent sessions to standbys, "off" to the primary (an AG without read-only routing).
const ParamRouting = "routing"

// Workload runs the TPC-C transactions for the runner: one Worker per VU, each with a home
// warehouse and district, its own connections, random source and deck.
type Workload struct {
	// Primary is where every read-write transaction runs.
	Primary *pgx.ConnConfig
	// ReadConfig, with ReadIntent, says where VU vu's read-intent session connects in a step
	// with these parameters (a standby, a listener with read intent, or the primary).
	ReadConfig func(params map[string]string, vu int) (*pgx.ConnConfig, error)
	Mode       Mode
	// ReadIntent runs Order-Status and Stock-Level on a second, read-intent, connection.
	ReadIntent bool
	// AllWarehouses draws the warehouse of every transaction from all warehouses instead
	// of the VU's home.
	AllWarehouses bool
	// Keying adds the specification's keying and think times (excluded from latency).
	Keying bool
	// OwnWrites, with ReadIntent in client mode, makes a VU's Order-Status after its
	// Payment read that Payment's customer, and counts the reads that missed the payment
	// (the step's result.ExtraStaleOwn section; Session.OwnWrites).
	OwnWrites bool
	// LagWatched says the run's database sampler watches the primary (internal/sample): it
	// measures the standbys' lag with what any login may read, or says why it cannot, so the
	// workload's sampler leaves a lag hidden from its login unsaid rather than contradict it.
	LagWatched bool
	// Land, when set, says where a session landed, naming the node as the run's target names
	// it (experiment.Load.Land); without it a node is its cluster_name, else its address.
	Land func(ctx context.Context, c *pgx.Conn) (workload.Landing, error)
	Seed uint64
	// Terminals, above 0, runs TPC-C's emulated terminals (terminal.go), with keying and
	// think times, served by a transaction monitor (monitor.go) over a pool of sessions: the
	// step's VUs, each one session serving the terminals' requests in turn.
	Terminals int
	// ThinkScale multiplies the terminals' keying and think times (0 means 1, the
	// specification's); below 1 the run is outside the specification.
	ThinkScale float64

	meta *Meta
	mon  *monitor
	run  Constants
	win  windowStats
}

// windowStats counts what the runner's histograms do not: reset when a window opens.
type windowStats struct {
	rolledBack    atomic.Int64
	primaryXacts  atomic.Int64 // attempts sent to the primary, each one server transaction
	readOnStandby atomic.Int64
	readOnPrimary atomic.Int64
	statements    atomic.Int64 // statements the client sent, all transactions and retries
	own           ownWrites
}

func (s *windowStats) reset() {
	s.rolledBack.Store(0)
	s.primaryXacts.Store(0)
	s.readOnStandby.Store(0)
	s.readOnPrimary.Store(0)
	s.statements.Store(0)
	s.own.reset()
}

// Prepare checks that the database is built and draws the run's NURand constants from the
// load's (clause 2.1.6.1). It returns the build's metadata.
func (w *Workload) Prepare(ctx context.Context) (*Meta, error) {
	if w.Primary == nil {
		return nil, fmt.Errorf("tpcc: no primary to connect to")
	}
	conn, err := Connect(ctx, w.Primary)
	if err != nil {
		return nil, fmt.Errorf("connect to the primary: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m, err := RequireReady(ctx, conn)
	if err != nil {
		return nil, err
	}
	if w.Mode == ModeFunctions {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE pronamespace = $1::regnamespace
			AND proname IN ('neword', 'payment', 'ostat', 'delivery', 'slev')`, Schema).Scan(&n); err != nil {
			return nil, err
		}
		if n != 5 {
			return nil, agerr.BadInputf("--mode functions: the database was built with --mode client (no server-side functions); run with --mode client or build again")
		}
	}
	w.meta = m
	w.run = RunConstants(NewRand(w.Seed, stream(0, streamConstants)+1), m.C)
	w.win.reset()
	if w.Terminals > 0 {
		w.mon = newMonitor(w)
	}
	return m, nil
}

// Constants returns the run's NURand constants (after Prepare).
func (w *Workload) Constants() Constants { return w.run }

// Home is the home warehouse and district (1-based) of VU vu of a schema of wh warehouses:
// spread evenly over the warehouses, then over their districts. A segment of a run split
// across load generators homes its VUs on its own share of the warehouses only, so that no
// two segments' VUs share one (a segment has at least one warehouse: Segment.Count(wh) >= 1).
func Home(vu workload.VU, wh int) (w, d int) {
	first, _ := vu.Segment.Range(vu.Of)
	lo, hi := vu.Segment.Range(wh)
	n, i := hi-lo, vu.ID-first
	return lo + i%n + 1, (i/n)%DistrictsPerWH + 1
}

// NewWorker makes one VU: its home warehouse and district spread evenly over the
// warehouses and districts, its connections and its deck.
func (w *Workload) NewWorker(ctx context.Context, vu workload.VU) (workload.Worker, error) {
	if w.meta == nil {
		if _, err := w.Prepare(ctx); err != nil {
			return nil, err
		}
	}
	wh := w.meta.Warehouses
	g := NewRand(uint64(vu.Seed), 1)
	wk := &worker{wl: w, vu: vu, deck: NewDeck(g)}
	homeW, homeD := Home(vu, wh)
	wk.sess = Session{Mode: w.Mode, OwnWrites: w.OwnWrites, T: &Terminal{G: g, C: w.run, Warehouses: wh,
		HomeW: homeW, HomeD: homeD, AllWarehouses: w.AllWarehouses}}
	var err error
	if wk.sess.Primary, err = Connect(ctx, w.sessionConfig()); err != nil {
		return nil, fmt.Errorf("VU %d: connect to the primary: %w", vu.ID+1, err)
	}
	wk.landings = append(wk.landings, w.landing(ctx, wk.sess.Primary))
	if w.ReadIntent {
		cfg, err := w.ReadConfig(vu.Params, vu.ID)
		if err != nil {
			wk.Close()
			return nil, err
		}
		if wk.sess.Read, err = Connect(ctx, cfg); err != nil {
			wk.Close()
			return nil, fmt.Errorf("VU %d: connect the read-intent session: %w", vu.ID+1, err)
		}
		l := w.landing(ctx, wk.sess.Read)
		wk.readOnStandby = l.InRecovery
		wk.landings = append(wk.landings, l)
	}
	if w.mon != nil {
		return w.mon.serve(wk), nil
	}
	return wk, nil
}

// landing says where a session is: the node as the target names it (Land), else the
// server's cluster_name (agbench names every node so) or its address, and whether it is a
// standby.
func (w *Workload) landing(ctx context.Context, c *pgx.Conn) workload.Landing {
	if w.Land != nil {
		if l, err := w.Land(ctx, c); err == nil {
			return l
		}
	}
	var l workload.Landing
	var addr *string
	_ = c.QueryRow(ctx, `SELECT current_setting('cluster_name'), host(inet_server_addr()) || ':' || inet_server_port(),
		pg_is_in_recovery()`).Scan(&l.Node, &addr, &l.InRecovery)
	if l.Node == "" && addr != nil {
		l.Node = *addr
	}
	return l
}

// worker is one VU.
type worker struct {
	wl            *Workload
	vu            workload.VU
	sess          Session
	deck          *Deck
	landings      []workload.Landing
	readOnStandby bool
	// remade are the sessions (by their place in landings) made again since Remade was asked.
	remade []int
}

// Do deals the next transaction from the deck and runs it; with keying, the keying time
// before and the think time after are waited outside the latency.
func (wk *worker) Do(ctx context.Context, op *workload.Op) error {
	k := wk.deck.Next()
	op.Name = k.String()
	if wk.wl.Keying {
		if err := op.Wait(ctx, KeyingTime(k)); err != nil {
			return nil
		}
	}
	out, err := wk.sess.Run(ctx, k)
	op.Retries = int64(out.Retries)
	wk.count(ctx, k, out, err)
	if err != nil {
		return err
	}
	if wk.wl.Keying {
		_ = op.Wait(ctx, wk.sess.T.ThinkTime(k))
	}
	return nil
}

// count adds a transaction's outcome to the window's counts.
func (wk *worker) count(ctx context.Context, k Kind, out Outcome, err error) {
	s := &wk.wl.win
	attempts := int64(out.Retries + 1)
	s.statements.Add(int64(out.Statements))
	switch {
	case out.OnRead && wk.readOnStandby:
		s.readOnStandby.Add(1)
	case out.OnRead:
		s.readOnPrimary.Add(1)
		s.primaryXacts.Add(attempts)
	default:
		if k.ReadOnly() {
			s.readOnPrimary.Add(1)
		}
		s.primaryXacts.Add(attempts)
	}
	if out.RolledBack {
		s.rolledBack.Add(1)
	}
	// A read cut off by the window's end (the runner's context) is no failed read: like the
	// operation itself, it is in no figure.
	if out.OwnRead && (err == nil || ctx.Err() == nil) {
		s.own.add(wk.landings[len(wk.landings)-1].Node, out, err)
	}
}

// Lost reports whether the server or the network closed one of the VU's sessions (after a
// failover, a restart, a terminated backend).
func (wk *worker) Lost() bool {
	return wk.sess.Primary.IsClosed() || (wk.sess.Read != nil && wk.sess.Read.IsClosed())
}

// Reconnect replaces the VU's closed sessions; the runner calls it, with its backoff, so
// that one broken connection does not fail every later transaction of the VU.
func (wk *worker) Reconnect(ctx context.Context) error {
	if wk.sess.Primary.IsClosed() {
		c, err := Connect(ctx, wk.wl.sessionConfig())
		if err != nil {
			return fmt.Errorf("reconnect to the primary: %w", err)
		}
		wk.sess.Primary = c
		wk.landings[0] = wk.wl.landing(ctx, c)
		wk.remade = append(wk.remade, 0)
	}
	if wk.sess.Read != nil && wk.sess.Read.IsClosed() {
		cfg, err := wk.wl.ReadConfig(wk.vu.Params, wk.vu.ID)
		if err != nil {
			return err
		}
		c, err := Connect(ctx, cfg)
		if err != nil {
			return fmt.Errorf("reconnect the read-intent session: %w", err)
		}
		wk.sess.Read = c
		l := wk.wl.landing(ctx, c)
		wk.readOnStandby = l.InRecovery
		wk.landings[1] = l
		wk.remade = append(wk.remade, 1)
	}
	return nil
}

// Remade says which sessions (0 the primary's, 1 the read-intent one) were made again
// since it was last asked (a Reconnect that failed half-way made some).
func (wk *worker) Remade() []int {
	r := wk.remade
	wk.remade = nil
	return r
}

var _ workload.Reconnector = (*worker)(nil)

// Landings reports where the VU's sessions are.
func (wk *worker) Landings() []workload.Landing { return wk.landings }

// Close closes the VU's connections.
func (wk *worker) Close() error {
	for _, c := range []*pgx.Conn{wk.sess.Primary, wk.sess.Read} {
		if c != nil {
			c.Close(context.Background())
		}
	}
	return nil
}
