package main

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/proc"
	sampler "github.com/agbench/agbench/internal/sample"
)

// watchEvery is how often the watcher reads its backends' CPU times (and pg_stat_activity
// for the backends it has not named yet). A backend's last interval before it exits is
// missed: at most this much of its CPU.
const watchEvery = 250 * time.Millisecond

// backendCPU follows, during one run, the CPU time of the server's client backends by what
// they are (pg_stat_activity's application_name): the samplers' sessions apart from the
// rest, so that their share of the server's CPU is measured rather than inferred from two
// runs' difference.
type backendCPU struct {
	conn *pgx.Conn

	mu    sync.Mutex
	first map[int]uint64 // ticks when first seen (0 for a backend born during the run)
	last  map[int]uint64
	start map[int]uint64 // process start time, so that a reused pid is not taken for another
	app   map[int]string
	stop  chan struct{}
	done  chan struct{}
}

// watchBackends starts following the backends of the server conn is connected to; stop
// returns the CPU of the samplers' backends over the watch.
func watchBackends(ctx context.Context, conn *pgx.Conn) (*backendCPU, error) {
	w := &backendCPU{conn: conn, first: map[int]uint64{}, last: map[int]uint64{}, start: map[int]uint64{},
		app: map[int]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	if err := w.name(ctx, true); err != nil {
		return nil, err
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.stop:
				return
			case <-t.C:
				_ = w.name(ctx, false)
				w.read()
			}
		}
	}()
	return w, nil
}

// name reads pg_stat_activity's client backends, keeping each new one's name; at the
// start (initial), what they used so far is left out.
func (w *backendCPU) name(ctx context.Context, initial bool) error {
	rows, err := w.conn.Query(ctx, `SELECT pid, coalesce(application_name, '') FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return err
	}
	defer rows.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	for rows.Next() {
		var pid int
		var app string
		if err := rows.Scan(&pid, &app); err != nil {
			return err
		}
		if _, ok := w.app[pid]; ok {
			continue
		}
		st, err := proc.ReadStat(proc.Root, pid)
		if err != nil {
			continue
		}
		w.app[pid], w.start[pid], w.last[pid] = app, st.StartTime, st.OwnTicks()
		if initial {
			w.first[pid] = st.OwnTicks()
		}
	}
	return rows.Err()
}

// read takes the CPU times of the named backends that still run.
func (w *backendCPU) read() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for pid, start := range w.start {
		if st, err := proc.ReadStat(proc.Root, pid); err == nil && st.StartTime == start {
			w.last[pid] = st.OwnTicks()
		}
	}
}

// samplers stops the watch and returns the CPU that the samplers' backends used during it.
func (w *backendCPU) samplers() time.Duration {
	close(w.stop)
	<-w.done
	w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	var ticks uint64
	for pid, app := range w.app {
		if app == sampler.SamplerAppName {
			ticks += w.last[pid] - w.first[pid]
		}
	}
	return time.Duration(proc.Seconds(ticks) * float64(time.Second))
}
