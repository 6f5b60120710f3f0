package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/agerr"
)

// BuildOptions says what to build and how.
type BuildOptions struct {
	Warehouses int
	// Loaders is how many connections load in parallel (--build-vus); each warehouse is
	// loaded by exactly one of them.
	Loaders int
	Seed    uint64
	// Now is the load's timestamp (C_SINCE, O_ENTRY_D, ...); zero means time.Now().
	Now time.Time
	// Progress, when set, is updated as the build goes, for the caller to show.
	Progress *Progress
	// NoFunctions skips installing the server-side functions (build --mode client).
	NoFunctions bool
}

// Validate reports every problem of the options, naming the flags.
func (o BuildOptions) Validate() error {
	var errs []error
	if o.Warehouses < 1 || o.Warehouses > MaxWarehouses {
		errs = append(errs, agerr.BadInputf("--warehouses %d: must be 1..%d", o.Warehouses, MaxWarehouses))
	}
	if o.Loaders < 1 || o.Loaders > 256 {
		errs = append(errs, agerr.BadInputf("--build-vus %d: must be 1..256", o.Loaders))
	}
	return agerr.Join(errs...)
}

// Phases of a build, as Progress reports them.
const (
	PhaseSchema = "schema"
	PhaseLoad   = "load"
	PhaseIndex  = "indexes and analyze"
	PhaseFuncs  = "functions"
	PhaseCkpt   = "checkpoint"
	PhaseDone   = "done"
)

// Progress is a build's progress, safe to read while the build writes it.
type Progress struct {
	rows  atomic.Int64
	total atomic.Int64
	phase atomic.Value
}

// Snapshot returns the phase, rows loaded so far and the estimated total rows.
func (p *Progress) Snapshot() (phase string, rows, total int64) {
	ph, _ := p.phase.Load().(string)
	return ph, p.rows.Load(), p.total.Load()
}

func (p *Progress) setPhase(s string) {
	if p != nil {
		p.phase.Store(s)
	}
}

// BuildReport tells what a build did.
type BuildReport struct {
	Rows    int64
	Load    time.Duration // the COPY phase
	Indexes time.Duration
	Analyze time.Duration
	// Checkpoint includes installing the functions and marking the build ready;
	// CheckpointSkipped says the login could not checkpoint (a note says so), so
	// Checkpoint timed no checkpoint.
	Checkpoint        time.Duration
	CheckpointSkipped bool
	Total             time.Duration
	Constants         Constants
	// Notes say what the build could not do with this login (e.g. CHECKPOINT).
	Notes []string
}

// stateInsufficientPrivilege is SQLSTATE 42501.
const stateInsufficientPrivilege = "42501"

// RowsPerWarehouse is the expected number of rows of one warehouse (order lines on average).
const RowsPerWarehouse = 1 + DistrictsPerWH + Items + 3*DistrictsPerWH*CustomersPerDistrict +
	DistrictsPerWH*(OrdersPerDistrict-FirstUndelivered+1) + DistrictsPerWH*OrdersPerDistrict*(MinOLCnt+MaxOLCnt)/2

// Build creates the schema in cfg's database, loads it in parallel with binary COPY, makes the
// keys and indexes, installs the server-side functions, analyzes and checkpoints. A database
// with a finished build is refused (bad input); a half-built one (an interrupted build) is
// dropped first. The build is marked ready only at the very end.
func Build(ctx context.Context, cfg *pgx.ConnConfig, o BuildOptions) (*BuildReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now().UTC().Truncate(time.Microsecond)
	}
	start := time.Now()
	conn, err := Connect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	m, err := ReadMeta(ctx, conn)
	if err != nil {
		return nil, err
	}
	if m != nil && m.State == StateReady {
		return nil, agerr.BadInputf("database %s: %w (%d warehouses, seed %d); run agbench tpcc drop first",
			cfg.Database, ErrAlreadyBuilt, m.Warehouses, m.Seed)
	}
	o.Progress.setPhase(PhaseSchema)
	if m != nil {
		if _, err := Drop(ctx, conn, false); err != nil {
			return nil, fmt.Errorf("drop the interrupted build: %w", err)
		}
	}
	c := NewConstants(NewRand(o.Seed, stream(0, streamConstants)))
	if err := createSchema(ctx, conn, o, c); err != nil {
		return nil, err
	}
	rep := &BuildReport{Constants: c}
	if o.Progress != nil {
		o.Progress.total.Store(int64(Items) + int64(o.Warehouses)*RowsPerWarehouse)
	}
	o.Progress.setPhase(PhaseLoad)
	t := time.Now()
	gen := &Generator{Seed: o.Seed, C: c, Now: o.Now}
	if rep.Rows, err = load(ctx, cfg, gen, o); err != nil {
		return nil, err
	}
	rep.Load = time.Since(t)
	o.Progress.setPhase(PhaseIndex)
	t = time.Now()
	if err := parallel(ctx, cfg, o.Loaders, afterLoad, "SET maintenance_work_mem = '256MB'"); err != nil {
		return nil, fmt.Errorf("indexes: %w", err)
	}
	rep.Indexes = time.Since(t)
	if !o.NoFunctions {
		o.Progress.setPhase(PhaseFuncs)
		if _, err := conn.Exec(ctx, functionsSQL); err != nil {
			return nil, fmt.Errorf("install functions: %w", err)
		}
	}
	o.Progress.setPhase(PhaseCkpt)
	t = time.Now()
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != stateInsufficientPrivilege {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		// An ordinary login may not checkpoint (PostgreSQL 15: superuser or pg_checkpoint).
		rep.CheckpointSkipped = true
		rep.Notes = append(rep.Notes, "no CHECKPOINT after the load: the login lacks pg_checkpoint, so the first run may write "+
			"the build's dirty pages during its window (grant pg_checkpoint, or run CHECKPOINT as a superuser before the run)")
	}
	if _, err := conn.Exec(ctx, `UPDATE tpcc.tpcc_meta SET state = $1, finished = now()`, StateReady); err != nil {
		return nil, fmt.Errorf("mark the build ready: %w", err)
	}
	rep.Checkpoint = time.Since(t)
	o.Progress.setPhase(PhaseDone)
	rep.Total = time.Since(start)
	return rep, nil
}

func createSchema(ctx context.Context, conn *pgx.Conn, o BuildOptions, c Constants) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	stmts := append([]string{"CREATE SCHEMA " + Schema, "SET LOCAL search_path = " + Schema, metaDDL}, tableDDL...)
	for t, ff := range fillfactor {
		stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s SET (fillfactor = %d)", t, ff))
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("create schema: %s: %w", firstLine(s), err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO tpcc_meta (version, state, warehouses, seed, c_last, c_id, ol_i_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, SchemaVersion, StateBuilding, o.Warehouses, int64(o.Seed),
		c.CLast, c.CID, c.OLIID); err != nil {
		return fmt.Errorf("create schema: record the build: %w", err)
	}
	return tx.Commit(ctx)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// load runs the loaders: each takes the next unit of work (the items, then one warehouse at
// a time) and COPYs its tables on its own connection.
func load(ctx context.Context, cfg *pgx.ConnConfig, gen *Generator, o BuildOptions) (int64, error) {
	units := make(chan int, o.Warehouses+1)
	for w := 0; w <= o.Warehouses; w++ { // 0 is the item table
		units <- w
	}
	close(units)
	var rows atomic.Int64
	err := fanOut(ctx, min(o.Loaders, o.Warehouses+1), func(ctx context.Context) error {
		conn, err := Connect(ctx, cfg)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		// A loader's commits need not wait for the WAL flush: the build is marked
		// ready only after a checkpoint, and an interrupted build is dropped.
		if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
			return err
		}
		for w := range units {
			tables := []tableData{gen.items()}
			if w > 0 {
				tables = gen.warehouseTables(w)
			}
			for _, t := range tables {
				n, err := conn.CopyFrom(ctx, pgx.Identifier{Schema, t.table}, t.cols, &counting{src: t.src, p: o.Progress})
				if err != nil {
					return fmt.Errorf("load %s of warehouse %d: %w", t.table, w, err)
				}
				rows.Add(n)
			}
		}
		return nil
	})
	return rows.Load(), err
}

// counting passes rows through and adds them to the progress every 1024 rows.
type counting struct {
	src pgx.CopyFromSource
	p   *Progress
	n   int64
}

func (c *counting) Next() bool {
	if !c.src.Next() {
		if c.p != nil {
			c.p.rows.Add(c.n & 1023)
		}
		return false
	}
	c.n++
	if c.n&1023 == 0 && c.p != nil {
		c.p.rows.Add(1024)
	}
	return true
}

func (c *counting) Values() ([]any, error) { return c.src.Values() }
func (c *counting) Err() error             { return c.src.Err() }

// parallel runs the groups of statements on up to n connections, each group once, its
// statements in order.
func parallel(ctx context.Context, cfg *pgx.ConnConfig, n int, stmts [][]string, setup string) error {
	work := make(chan []string, len(stmts))
	for _, s := range stmts {
		work <- s
	}
	close(work)
	return fanOut(ctx, min(n, len(stmts)), func(ctx context.Context) error {
		conn, err := Connect(ctx, cfg)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		if setup != "" {
			if _, err := conn.Exec(ctx, setup); err != nil {
				return err
			}
		}
		for group := range work {
			for _, s := range group {
				if _, err := conn.Exec(ctx, s); err != nil {
					return fmt.Errorf("%s: %w", s, err)
				}
			}
		}
		return nil
	})
}

// fanOut runs f on n goroutines and returns the first error; the first error cancels the
// others' context.
func fanOut(ctx context.Context, n int, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}
