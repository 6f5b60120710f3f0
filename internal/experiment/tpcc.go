package experiment

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// tpccSession is what a tpcc run holds beside its Load while its steps run: the schema's
// metadata, a session to the primary (the consistency checks after the run) and the tpcc
// sampler (NOPM and TPM cross-checked on the server, replay lag).
type tpccSession struct {
	Meta    *tpcc.Meta
	Conn    *pgx.Conn
	Sampler *tpcc.Sampler
}

// startTPCC starts what a tpcc run needs before its first step: the load's own listeners
// (Start), the logins' privileges checked (TPCCRunNeeds), the schema's metadata, the
// read-intent sessions' route (through an in-process listener per routing variant, else to
// the listener with read intent or the standbys in turn), the standbys caught up with the build when reads go there, a session to the
// primary with room for the largest step, the result's configuration and the sampler.
// Close the returned run, then the load.
func startTPCC(ctx context.Context, l *Load, w *tpcc.Workload, names given) (*tpccSession, error) {
	if err := l.Start(ctx); err != nil {
		return nil, err
	}
	if err := privilege.Check(ctx, l.Target, TPCCRunNeeds(w.Mode == tpcc.ModeFunctions, w.ReadIntent)); err != nil {
		return nil, err
	}
	meta, err := w.Prepare(ctx)
	if err != nil {
		return nil, err
	}
	w.ReadConfig = func(params map[string]string, vu int) (*pgx.ConnConfig, error) {
		return tpcc.ConnConfig(l.ReadConnString(params, vu), "read-intent session")
	}
	if w.ReadIntent {
		if err := l.Target.WaitReplayed(ctx, replayWait); err != nil {
			return nil, fmt.Errorf("wait for the standbys to replay the build: %w", err)
		}
	}
	conn, err := connectWithRoom(ctx, l, w, names)
	if err != nil {
		return nil, err
	}
	l.Config = tpccConfig(l, w, meta, names)
	w.LagWatched = l.Sample && len(PGNodes(l.Target, l.Database)) > 0
	w.Land = l.Land
	smp, err := w.NewSampler(ctx)
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	smp.Share = !l.Segment.Whole()
	return &tpccSession{Meta: meta, Conn: conn, Sampler: smp}, nil
}

// Samplers are the run's own samplers, for Load.Samplers.
func (r *tpccSession) Samplers() []runner.Sampler { return []runner.Sampler{r.Sampler} }

// Close closes the sampler and the session.
func (r *tpccSession) Close(ctx context.Context) {
	r.Sampler.Close()
	r.Conn.Close(context.WithoutCancel(ctx))
}

// connectWithRoom connects to the primary and checks that it accepts the sessions of the
// largest step (two per VU when the read-intent sessions land on the primary too), a
// segment's share of them in a segment.
func connectWithRoom(ctx context.Context, l *Load, w *tpcc.Workload, names given) (*pgx.Conn, error) {
	conn, err := tpcc.Connect(ctx, w.Primary)
	if err != nil {
		return nil, fmt.Errorf("connect to the primary: %w", err)
	}
	perVU := 1
	if w.ReadIntent && (l.Sweep.Compare != nil || len(l.Target.Standbys) == 0) {
		perVU = 2 // routing off: the read-intent session is on the primary too
	}
	// A segment checks the sessions of its own share: the other segments', started before
	// it, are in use already, and those started after check theirs on what is left then.
	flag, share := names.loadFlag(), maxLoad(l.Sweep)
	if !l.Segment.Whole() {
		share = l.Segment.Count(share)
		flag += fmt.Sprintf(" (segment %s's share, %d)", l.Segment, share)
	}
	if err := tpcc.CheckCapacity(ctx, conn, share*perVU+1, 1, flag); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// maxLoad is the largest value of the sweep's load axis, its first (the largest step's VUs;
// a run of terminals' pool of sessions, its terminals being the second).
func maxLoad(sw runner.Sweep) int {
	m := 0
	if len(sw.Axes) == 0 {
		return 0
	}
	for _, v := range sw.Axes[0].Values {
		n, _ := strconv.Atoi(v)
		m = max(m, n)
	}
	return m
}
