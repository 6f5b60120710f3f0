package readahead

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Measurement is one run of one query: our STATISTICS IO for it.
type Measurement struct {
	Query    string `json:"query"`
	Prefetch bool   `json:"prefetch"`
	Repeat   int    `json:"repeat"`
	// ColdAsked is true when the cache was emptied before the run; Cold is true when the run
	// then read from storage (reads > 0), so a run reported cold really was.
	ColdAsked bool `json:"cold_asked"`
	Cold      bool `json:"cold"`
	// Start and ElapsedMs bound the query as the client saw it (EXPLAIN ANALYZE: no rows
	// sent to the client).
	Start     time.Time `json:"start"`
	ElapsedMs float64   `json:"elapsed_ms"`
	Plan      PlanStats `json:"plan"`
	// NodeOK is true when the expected plan node ran (Query.Node).
	NodeOK bool `json:"node_ok"`
	// PgIO are pg_stat_io's relation reads during the run (16+): operations and bytes.
	PgIOOps   int64 `json:"pg_io_ops,omitempty"`
	PgIOBytes int64 `json:"pg_io_bytes,omitempty"`
	// Dev are the device's reads during the run (/proc/diskstats): on the private device every
	// read the run caused, counted once the device settled (the read-ahead still in flight when
	// the query returned included, nothing of an earlier run); else the reads of the data
	// directory's device while the query ran, shared with every other process on it.
	DevOps   int64   `json:"dev_ops,omitempty"`
	DevBytes int64   `json:"dev_bytes,omitempty"`
	DevMs    float64 `json:"dev_read_ms,omitempty"`
	// IOOps and IOBytes are the preferred of the two (pg_stat_io where present).
	IOOps   int64 `json:"io_ops"`
	IOBytes int64 `json:"io_bytes"`
}

// AvgIOKB is the average read size in kB (1024 bytes), 0 without IO counters.
func (m Measurement) AvgIOKB() float64 {
	if m.IOOps == 0 {
		return 0
	}
	return float64(m.IOBytes) / float64(m.IOOps) / 1024
}

// Cold empties the server's caches of the experiment's relations: shared buffers (a
// restart, or pg_buffercache_evict_all on 18) and, without direct IO, the OS page cache of
// the relation files.
func (e *Experiment) Cold(ctx context.Context) error {
	if e.evict {
		c, err := e.srv.Connect(ctx, Database)
		if err != nil {
			return err
		}
		_, err = c.Exec(ctx, "SELECT pg_buffercache_evict_all()")
		c.Close(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("pg_buffercache_evict_all: %w", err)
		}
	} else if err := e.srv.Restart(ctx); err != nil {
		return err
	}
	if !e.direct {
		if _, err := EvictFiles(e.srv.DataDir(), e.rels); err != nil {
			return err
		}
	}
	if e.cfg.DropCaches {
		return DropPageCache()
	}
	return nil
}

// Measure runs one query once, prefetch off or on, after emptying the caches when cold.
func (e *Experiment) Measure(ctx context.Context, q Query, prefetch, cold bool, repeat int) (Measurement, error) {
	m := Measurement{Query: q.Name, Prefetch: prefetch, Repeat: repeat, ColdAsked: cold}
	if e.dev != nil {
		kb := 0
		if prefetch {
			kb = e.cfg.ReadAheadKB
		}
		if err := e.dev.SetReadAhead(kb); err != nil {
			return m, fmt.Errorf("set read_ahead_kb of %s: %w", e.dev.Name, err)
		}
	}
	if cold {
		if err := e.Cold(ctx); err != nil {
			return m, err
		}
	}
	c, err := e.session(ctx, q, prefetch)
	if err != nil {
		return m, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	// Plan once first, so that the catalog reads of a fresh session are not in the run.
	if _, err := c.Exec(ctx, "EXPLAIN "+q.SQL); err != nil {
		return m, err
	}
	var pg0, pg1, dev0, dev1 ioCounters
	usePg := e.vnum >= 160000
	if usePg {
		if pg0, err = readPgStatIO(ctx, c, e.vnum); err != nil {
			return m, fmt.Errorf("pg_stat_io: %w", err)
		}
	}
	if e.ioDev != "" {
		if dev0, err = e.readDevice(ctx); err != nil {
			return m, err
		}
	}
	var out []byte
	m.Start = time.Now()
	err = c.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) "+q.SQL).Scan(&out)
	m.ElapsedMs = float64(time.Since(m.Start).Microseconds()) / 1000
	if err != nil {
		return m, fmt.Errorf("%s: %w", q.Name, err)
	}
	if e.ioDev != "" {
		if dev1, err = e.readDevice(ctx); err != nil {
			return m, err
		}
		d := dev1.sub(dev0)
		m.DevOps, m.DevBytes, m.DevMs = d.Ops, d.Bytes, d.Ms
	}
	if usePg {
		if pg1, err = readPgStatIO(ctx, c, e.vnum); err != nil {
			return m, fmt.Errorf("pg_stat_io: %w", err)
		}
		d := pg1.sub(pg0)
		m.PgIOOps, m.PgIOBytes = d.Ops, d.Bytes
	}
	if m.Plan, err = ParseExplain(out); err != nil {
		return m, err
	}
	m.NodeOK = m.Plan.HasNode(q.Node)
	switch {
	case usePg:
		m.IOOps, m.IOBytes = m.PgIOOps, m.PgIOBytes
	case e.ioDev != "":
		m.IOOps, m.IOBytes = m.DevOps, m.DevBytes
	}
	m.Cold = cold && m.Plan.SharedRead > 0 && (e.dev == nil || m.DevOps > 0)
	return m, nil
}

// RunAll runs the schedule (Schedule) cold, calling each after every measurement (to save
// the result as it grows). It stops at the first error or when ctx ends, returning what was
// measured.
func (e *Experiment) RunAll(ctx context.Context, each func(Measurement)) ([]Measurement, error) {
	runs := Schedule(e.cfg.selected(), e.cfg.Repeat)
	var out []Measurement
	for i, r := range runs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		m, err := e.Measure(ctx, r.Query, r.Prefetch, true, r.Repeat)
		if err != nil {
			if ctx.Err() != nil {
				err = errors.Join(ctx.Err(), err)
			}
			return out, err
		}
		out = append(out, m)
		e.progress("[%d/%d] %-11s %-12s %9.1f ms  hit %d read %d  io %d x %.0f kB%s", i+1, len(runs), r.Query.Name, Variant(r.Prefetch),
			m.ElapsedMs, m.Plan.SharedHit, m.Plan.SharedRead, m.IOOps, m.AvgIOKB(), coldMark(m))
		if each != nil {
			each(m)
		}
	}
	return out, nil
}

// readDevice reads the device counters of a run's bounds. On the private device it first
// waits for the device to settle (settledDevice), so that a run's figures hold every read it
// caused, the read-ahead still in flight when the query returned included, and none of an
// earlier run's or of the planning before it. The shared device of the data directory is read
// as it is: other processes keep it busy, and its figures are labelled as shared.
func (e *Experiment) readDevice(ctx context.Context) (ioCounters, error) {
	if e.dev == nil {
		return readDevice(e.ioDev)
	}
	quiet := settleQuiet
	if e.thr != nil {
		// A throttled read waits in the blkio group, not yet in flight, for up to one
		// throttle slice (100 ms) plus the interval between two reads at the limit.
		quiet = 100*time.Millisecond + 2*time.Second/time.Duration(e.cfg.ThrottleIOPS)
	}
	return settledDevice(ctx, e.ioDev, quiet)
}

func coldMark(m Measurement) string {
	if m.ColdAsked && !m.Cold {
		return "  (WARM: no reads from storage)"
	}
	return ""
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
