package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/bench/harness"
	sampler "github.com/agbench/agbench/internal/sample"
)

const tpmCWords = `tpmC: ([0-9.]+), tpmTotal: ([0-9.]+)`

// sample is one run of one side.
type sample struct {
	nopm, tpm               float64 // the tool's own
	srvNOPM, srvTPM         float64 // the server's, over the tool's whole run
	stmtsPerTx, ownStmts    float64 // pg_stat_statements calls per server transaction; the tool's own count (agbench)
	driverUs, serverUs      float64 // CPU µs per transaction the tool completed
	linesPerNO, rowsPerNO   float64 // order lines inserted, all rows changed, per server New-Order
	stockPerNO, custPerNO   float64
	historyPerNO, errors    float64
	samplerShare            float64 // the samplers' backends' CPU over the server's
	wall                    time.Duration
	driverCPU, serverCPU    time.Duration
	samplerCPU              time.Duration
	newOrders, transactions int64
	clientTx                int64 // transactions the tool completed (its own count)
}

// totalUs is the driver's and the server's CPU per transaction.
func (s sample) totalUs() float64 { return s.driverUs + s.serverUs }

// counters are the server's, read before and after a run, for one database.
type counters struct {
	newOrders, xacts, calls int64
	ins, upd, del           map[string]int64
	cpu                     time.Duration
}

func (b *bench) read(ctx context.Context, db, schema string) (*counters, error) {
	c := &counters{ins: map[string]int64{}, upd: map[string]int64{}, del: map[string]int64{}}
	conn, err := b.connect(ctx, db)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT sum(d_next_o_id)::int8 FROM %s.district", schema)).Scan(&c.newOrders); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback, (SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements s
		WHERE s.dbid = d.datid) FROM pg_stat_database d WHERE datname = current_database()`).Scan(&c.xacts, &c.calls); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables WHERE schemaname = $1`, schema)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		var i, u, d int64
		if err := rows.Scan(&name, &i, &u, &d); err != nil {
			return nil, err
		}
		c.ins[name], c.upd[name], c.del[name] = i, u, d
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The server's CPU: its postmaster's and all its children's, living and gone.
	pm, err := b.topo.OwnPostmaster(b.topo.Primary().Name)
	if err != nil {
		return nil, err
	}
	c.cpu, err = sampler.PostmasterCPU(pm)
	return c, err
}

// measure runs one side once and reads the server's counters around it.
func (b *bench) measure(ctx context.Context, sd side, commit string, round int) (sample, error) {
	schema := "tpcc"
	if sd.gotpc {
		schema = "public"
	}
	if _, err := b.exec(ctx, b.topo.Database, "CHECKPOINT"); err != nil {
		return sample{}, err
	}
	if err := b.quiet(ctx, sd.db); err != nil {
		return sample{}, err
	}
	before, err := b.read(ctx, sd.db, schema)
	if err != nil {
		return sample{}, err
	}
	var s sample
	results := filepath.Join(b.work, "results", commit, fmt.Sprint(round), strings.ReplaceAll(sd.name, " ", "-"))
	name, args := sd.bin, append(b.gotpcArgs("run"), "-T", strconv.Itoa(b.vus), "--time", fmt.Sprintf("%ds", b.secs), "--interval", "1000s")
	if !sd.gotpc {
		args = []string{"tpcc", "run", "--primary", b.topo.ConnString(b.topo.Primary(), sd.db), "--mode", sd.mode,
			"--vus", strconv.Itoa(b.vus), "--rampup", "0s", "--duration", fmt.Sprintf("%ds", b.secs),
			"--sample=" + strconv.FormatBool(sd.sampled), "--results", results}
	}
	// Every side is watched alike (the watcher's own reads of pg_stat_activity are server CPU).
	wconn, err := b.connect(ctx, b.topo.Database)
	if err != nil {
		return s, err
	}
	defer wconn.Close(context.WithoutCancel(ctx))
	watch, err := watchBackends(ctx, wconn)
	if err != nil {
		return s, err
	}
	t0 := time.Now()
	out, cpu, err := harness.Run(ctx, b.env, name, args...)
	s.wall, s.driverCPU = time.Since(t0), cpu
	s.samplerCPU = watch.samplers()
	if err != nil {
		return s, err
	}
	if err := b.quiet(ctx, sd.db); err != nil {
		return s, err
	}
	after, err := b.read(ctx, sd.db, schema)
	if err != nil {
		return s, err
	}
	if sd.gotpc {
		err = s.goTPCFigures(out)
	} else {
		err = s.agbenchFigures(results)
	}
	if err != nil {
		return s, err
	}
	if s.clientTx == 0 {
		return s, fmt.Errorf("no transaction counted in the tool's output:\n%s", out)
	}
	s.serverFigures(before, after)
	return s, nil
}

// goTPCFigures reads go-tpc's own figures from its output.
func (s *sample) goTPCFigures(out []byte) error {
	m := regexp.MustCompile(tpmCWords).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("no tpmC in go-tpc's output:\n%s", out)
	}
	s.nopm, _ = strconv.ParseFloat(string(m[1]), 64)
	s.tpm, _ = strconv.ParseFloat(string(m[2]), 64)
	for _, m := range regexp.MustCompile(`\[Summary\] (\S+) - Takes\(s\): [0-9.]+, Count: (\d+)`).FindAllSubmatch(out, -1) {
		n, _ := strconv.ParseInt(string(m[2]), 10, 64)
		if strings.HasSuffix(string(m[1]), "_ERR") {
			s.errors += float64(n)
		} else {
			s.clientTx += n
		}
	}
	return nil
}

// agbenchFigures reads agbench's own figures from the result it wrote under results.
func (s *sample) agbenchFigures(results string) error {
	r, err := harness.ReadResult(results, "tpcc-run")
	if err != nil {
		return err
	}
	if len(r.Steps) != 1 {
		return fmt.Errorf("%d steps in the result, want 1", len(r.Steps))
	}
	st := r.Steps[0]
	s.nopm, s.tpm, s.ownStmts = st.Counters["nopm"], st.Counters["tpm"], st.Counters["statements_per_tx"]
	s.errors = float64(st.Totals().Errors)
	s.clientTx = st.Totals().Count
	return nil
}

// serverFigures are the server's, over the whole run (connections, warm-up and all).
func (s *sample) serverFigures(before, after *counters) {
	min := s.wall.Minutes()
	s.newOrders, s.transactions = after.newOrders-before.newOrders, after.xacts-before.xacts
	no, tx := float64(s.newOrders), float64(s.transactions)
	// Per transaction figures divide by the tool's own count of completed transactions:
	// go-tpc's server transactions are about twice its transactions, and the samplers'
	// transactions are no work of the load's.
	s.srvNOPM, s.srvTPM = no/min, tx/min
	s.serverCPU = after.cpu - before.cpu
	if s.serverCPU > 0 {
		s.samplerShare = s.samplerCPU.Seconds() / s.serverCPU.Seconds()
	}
	// pg_stat_statements counts this program's own reads too: two per read (the counters'
	// query itself is counted once it has run), a rounding error at these rates.
	ntx := float64(s.clientTx)
	s.stmtsPerTx = float64(after.calls-before.calls) / ntx
	s.driverUs = float64(s.driverCPU.Microseconds()) / ntx
	s.serverUs = float64(s.serverCPU.Microseconds()) / ntx
	delta := func(m func(*counters) map[string]int64, table string) float64 {
		return float64(m(after)[table]-m(before)[table]) / no
	}
	ins := func(c *counters) map[string]int64 { return c.ins }
	upd := func(c *counters) map[string]int64 { return c.upd }
	del := func(c *counters) map[string]int64 { return c.del }
	s.linesPerNO, s.stockPerNO = delta(ins, "order_line"), delta(upd, "stock")
	s.custPerNO, s.historyPerNO = delta(upd, "customer"), delta(ins, "history")
	for t := range after.ins {
		s.rowsPerNO += delta(ins, t) + delta(upd, t) + delta(del, t)
	}
}

// quiet waits until no session but this program's is connected to db, so that the backends
// of the run before have exited and flushed their statistics.
func (b *bench) quiet(ctx context.Context, db string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := b.query(ctx, b.topo.Database, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1
			AND backend_type = 'client backend' AND pid <> pg_backend_pid()`, &n, db); err != nil {
			return err
		}
		if n == 0 {
			// A backend flushes its statistics as it exits; the stats of the last one to go
			// are visible to a new snapshot.
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d sessions still on %s 30 s after the run", n, db)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *bench) gotpcArgs(sub string) []string {
	p := b.topo.Primary()
	return []string{"tpcc", sub, "-d", "postgres", "-H", p.Host, "-P", strconv.Itoa(p.Port), "-U", b.topo.Superuser,
		"-p", b.password, "-D", gotpcDB, "--conn-params", "sslmode=disable", "--warehouses", strconv.Itoa(b.wh)}
}

func (b *bench) cmd(ctx context.Context, name string, args ...string) error {
	_, _, err := harness.Run(ctx, b.env, name, args...)
	return err
}

func (b *bench) connect(ctx context.Context, db string) (*pgx.Conn, error) {
	return pgx.Connect(ctx, b.topo.ConnString(b.topo.Primary(), db))
}

func (b *bench) query(ctx context.Context, db, sql string, dst any, args ...any) error {
	conn, err := b.connect(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql, args...).Scan(dst)
}

func (b *bench) exec(ctx context.Context, db, sql string) (int64, error) {
	conn, err := b.connect(ctx, db)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	for _, q := range strings.Split(sql, "; ") {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, err
		}
	}
	return 0, nil
}
