// Command tpcc runs go-tpc (built from its public source once, gotpc.go) and
// agbench tpcc in both modes on one PostgreSQL server that it starts itself (a throwaway
// lone primary on a loopback port, fsync on), interleaved (the order of the three runs
// rotates every round), and prints for each run and as medians: the tool's own NOPM/tpmC and
// TPM, the New-Orders per minute counted on the server (the districts' next order ids), the
// server's transactions per minute (pg_stat_database), statements per transaction (the
// server's pg_stat_statements; agbench's own count beside it), the driver's and the server's
// CPU per transaction, the row work per New-Order (pg_stat_user_tables), and the ratios to
// go-tpc of the same round. `make bench-tpcc` runs it; it is a benchmark, not a test.
//
// Imports from agbench: only bench/harness, internal/cluster, internal/sample.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/cluster"
	sampler "github.com/agbench/agbench/internal/sample"
)

// Targets, on the median of the per-round ratios to go-tpc: tpcc run is worth running in
// its place only if it loads the server harder for less driver CPU.
const (
	clientMinNOPM   = 1.2 // client mode's server New-Orders/min ≥ 1.2 × go-tpc's
	clientMaxCPU    = 0.8 // client mode's driver CPU per transaction ≤ 0.8 × go-tpc's
	functionMinNOPM = 2.0
)

const (
	goTPC     = "go-tpc"
	agClient  = "agbench client"
	agFunc    = "agbench functions"
	gotpcDB   = "gotpc"
	tpmCWords = `tpmC: ([0-9.]+), tpmTotal: ([0-9.]+)`
)

// sample is one run of one tool.
type sample struct {
	nopm, tpm               float64 // the tool's own
	srvNOPM, srvTPM         float64 // the server's, over the tool's whole run
	stmtsPerTx, ownStmts    float64 // pg_stat_statements calls per server transaction; the tool's own count (agbench)
	driverUs, serverUs      float64 // CPU µs per server transaction
	linesPerNO, rowsPerNO   float64 // order lines inserted, all rows changed, per server New-Order
	stockPerNO, custPerNO   float64
	historyPerNO, errors    float64
	wall                    time.Duration
	driverCPU, serverCPU    time.Duration
	newOrders, transactions int64
	clientTx                int64 // transactions the tool completed (its own count)
}

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	gotpc := flag.String("gotpc", "", "go-tpc binary (default: built from its source once, into $AGBENCH_CACHE or the user's cache folder)")
	rounds := flag.Int("rounds", 3, "rounds (medians are taken over them)")
	secs := flag.Int("secs", 60, "seconds per run")
	warehouses := flag.Int("warehouses", 2, "warehouses")
	vus := flag.Int("vus", 2, "virtual users (go-tpc threads)")
	commits := flag.String("commit", "on,off", "synchronous_commit settings, each measured in turn on the same server and data")
	var sets []string
	flag.Func("set", "a server setting key=value (repeatable), e.g. synchronous_commit=off", func(v string) error {
		if _, err := cluster.ParseSettings([]string{v}); err != nil {
			return err
		}
		sets = append(sets, v)
		return nil
	})
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var commitList []string
	for _, c := range strings.Split(*commits, ",") {
		if _, err := cluster.ParseSettings([]string{"synchronous_commit=" + c}); err != nil || c == "" {
			fmt.Fprintf(os.Stderr, "bench tpcc: -commit %q: a comma-separated list of synchronous_commit values (on, off, local …)\n", *commits)
			os.Exit(2)
		}
		commitList = append(commitList, c)
	}
	err := error(nil)
	if *gotpc == "" {
		*gotpc, err = buildGoTPC(ctx)
	}
	if err == nil {
		abs, _ := filepath.Abs(*bin)
		b := &bench{bin: abs, gotpc: *gotpc, secs: *secs, wh: *warehouses, vus: *vus}
		err = run(ctx, b, *rounds, sets, commitList)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench tpcc:", err)
		os.Exit(1)
	}
}

type bench struct {
	topo       *cluster.Topology
	env        []string
	bin, gotpc string
	password   string
	secs, wh   int
	vus        int
	work       string
}

func run(ctx context.Context, b *bench, rounds int, sets, commits []string) error {
	p, err := harness.StartCluster(ctx, "bench", 0, append([]string{"shared_buffers=1GB", "max_wal_size=8GB",
		"checkpoint_timeout=30min", "max_connections=100", "shared_preload_libraries=pg_stat_statements",
		"pg_stat_statements.track_utility=on"}, sets...))
	if err != nil {
		return err
	}
	defer p.Close()
	b.topo, b.env, b.work = p.Topo, p.Env, p.Home
	if b.password, err = p.Password(); err != nil {
		return err
	}
	var version string
	if err := b.query(ctx, b.topo.Database, `SELECT format('PostgreSQL %s on 127.0.0.1:%s, shared_buffers=%s, fsync %s',
		current_setting('server_version'), current_setting('port'), current_setting('shared_buffers'), current_setting('fsync'))`,
		&version); err != nil {
		return err
	}
	harness.Header(os.Stdout, "agbench tpcc against go-tpc")
	fmt.Printf("one server for all: %s, pg_stat_statements\n", version)
	fmt.Printf("%d warehouses, %d VUs, %d s per run, %d rounds, order rotated each round; no keying or think time;\n", b.wh, b.vus, b.secs, rounds)
	fmt.Printf("synchronous_commit %s in turn, on the same server and data\n\n", strings.Join(commits, ", then "))
	if err := b.prepare(ctx); err != nil {
		return err
	}
	for _, commit := range commits {
		if err := b.rounds(ctx, commit, rounds); err != nil {
			return err
		}
	}
	return nil
}

// prepare loads both tools' data, each into a database of its own on the one server.
func (b *bench) prepare(ctx context.Context) error {
	for _, step := range []struct {
		what string
		f    func() error
	}{
		{"create extension", func() error {
			if _, err := b.exec(ctx, b.topo.Database, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; CREATE DATABASE "+gotpcDB); err != nil {
				return err
			}
			_, err := b.exec(ctx, gotpcDB, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
			return err
		}},
		{"agbench tpcc build", func() error {
			return b.cmd(ctx, b.bin, "tpcc", "build", "--primary", b.topo.ConnString(b.topo.Primary(), ""), "--warehouses", strconv.Itoa(b.wh))
		}},
		{"go-tpc tpcc prepare", func() error {
			return b.cmd(ctx, b.gotpc, append(b.gotpcArgs("prepare"), "-T", strconv.Itoa(b.wh))...)
		}},
	} {
		t0 := time.Now()
		if err := step.f(); err != nil {
			return fmt.Errorf("%s: %w", step.what, err)
		}
		fmt.Printf("%-22s %6.1fs\n", step.what, time.Since(t0).Seconds())
	}
	return nil
}

// rounds measures the three tools with synchronous_commit set to commit, the order
// rotated each round, and reports their medians.
func (b *bench) rounds(ctx context.Context, commit string, rounds int) error {
	if err := b.setCommit(ctx, commit); err != nil {
		return err
	}
	fmt.Printf("\n== synchronous_commit %s · %s UTC · load average %s\n", commit, time.Now().UTC().Format("15:04"), harness.LoadAverage())
	fmt.Printf("%-5s %-18s %7s %7s %8s %8s %6s %6s %8s %8s %6s %6s %6s %6s\n", "round", "tool", "NOPM", "TPM", "srvNOPM", "srvTPM",
		"st/tx", "own", "drv µs", "srv µs", "OL/NO", "ST/NO", "rows", "errs")
	samples := map[string][]sample{}
	for r := 0; r < rounds; r++ {
		for _, tool := range harness.Rotate([]string{goTPC, agFunc, agClient}, r) {
			s, err := b.measure(ctx, tool, commit, r)
			if err != nil {
				return fmt.Errorf("synchronous_commit %s, round %d, %s: %w", commit, r+1, tool, err)
			}
			samples[tool] = append(samples[tool], s)
			fmt.Printf("%-5d %-18s %7.0f %7.0f %8.0f %8.0f %6.1f %6s %8.0f %8.0f %6.2f %6.2f %6.1f %6.0f\n", r+1, tool, s.nopm, s.tpm,
				s.srvNOPM, s.srvTPM, s.stmtsPerTx, optional(s.ownStmts, "%.1f"), s.driverUs, s.serverUs, s.linesPerNO, s.stockPerNO, s.rowsPerNO, s.errors)
		}
	}
	harness.Footer(os.Stdout)
	report(samples, rounds)
	return nil
}

// setCommit sets synchronous_commit for the sessions that start after it (the server's
// configuration, reloaded) and checks that a new session sees it.
func (b *bench) setCommit(ctx context.Context, commit string) error {
	for _, q := range []string{"ALTER SYSTEM SET synchronous_commit = '" + commit + "'", "SELECT pg_reload_conf()"} {
		if _, err := b.exec(ctx, b.topo.Database, q); err != nil {
			return fmt.Errorf("synchronous_commit %s: %w", commit, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got string
		if err := b.query(ctx, b.topo.Database, "SELECT current_setting('synchronous_commit')", &got); err != nil {
			return err
		}
		if got == commit {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("synchronous_commit is %s 10 s after setting it to %s", got, commit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func optional(v float64, format string) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// report prints the medians and the median of each round's ratios to go-tpc.
func report(samples map[string][]sample, rounds int) {
	med := func(tool string, f func(sample) float64) float64 { return harness.Median(samples[tool], f) }
	ratio := func(tool string, f func(sample) float64) float64 {
		r, _ := harness.RoundRatio(samples[tool], samples[goTPC], f)
		return r
	}
	srvNOPM := func(s sample) float64 { return s.srvNOPM }
	drv := func(s sample) float64 { return s.driverUs }
	fmt.Printf("\nmedians of %d rounds (NOPM/TPM: the tool's own count; srv: the server's, over the tool's whole run;\n", rounds)
	fmt.Println("per transaction: per transaction the tool completed (its own count);")
	fmt.Println("statements: pg_stat_statements calls (function bodies not counted), agbench's own count beside (BEGIN/COMMIT included);")
	fmt.Println("CPU: the driver process's and all PostgreSQL processes' user+system time;")
	fmt.Println("rows per New-Order: order lines inserted, stock, customer and history rows changed, all rows changed)")
	fmt.Printf("%-18s %8s %8s %8s %8s %6s %6s %8s %8s %5s %5s %5s %5s %6s | %7s %7s %7s\n", "tool", "NOPM/tpmC", "TPM", "srvNOPM", "srvTPM",
		"st/tx", "own", "drv µs", "srv µs", "OL", "ST", "CU", "HI", "rows", "×NOPM", "×drvCPU", "×srvCPU")
	for _, tool := range []string{goTPC, agFunc, agClient} {
		fmt.Printf("%-18s %8.0f %8.0f %8.0f %8.0f %6.1f %6s %8.0f %8.0f %5.2f %5.2f %5.2f %5.2f %6.1f | %6.2f× %6.2f× %6.2f×\n", tool,
			med(tool, func(s sample) float64 { return s.nopm }), med(tool, func(s sample) float64 { return s.tpm }),
			med(tool, srvNOPM), med(tool, func(s sample) float64 { return s.srvTPM }),
			med(tool, func(s sample) float64 { return s.stmtsPerTx }), optional(med(tool, func(s sample) float64 { return s.ownStmts }), "%.1f"),
			med(tool, drv), med(tool, func(s sample) float64 { return s.serverUs }),
			med(tool, func(s sample) float64 { return s.linesPerNO }), med(tool, func(s sample) float64 { return s.stockPerNO }),
			med(tool, func(s sample) float64 { return s.custPerNO }), med(tool, func(s sample) float64 { return s.historyPerNO }),
			med(tool, func(s sample) float64 { return s.rowsPerNO }),
			ratio(tool, srvNOPM), ratio(tool, drv), ratio(tool, func(s sample) float64 { return s.serverUs }))
	}
	c, cc, f := ratio(agClient, srvNOPM), ratio(agClient, drv), ratio(agFunc, srvNOPM)
	fmt.Printf("\ntargets (median of the per-round ratios to go-tpc, server New-Orders per minute):\n")
	fmt.Printf("  client mode    %.2f× NOPM (≥ %.1f×), %.2f× driver CPU per transaction (≤ %.1f×): %s\n", c, clientMinNOPM, cc, clientMaxCPU,
		harness.Met(c >= clientMinNOPM && cc <= clientMaxCPU))
	fmt.Printf("  functions mode %.2f× NOPM (≥ %.1f×): %s\n", f, functionMinNOPM, harness.Met(f >= functionMinNOPM))
}

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

// measure runs one tool once and reads the server's counters around it.
func (b *bench) measure(ctx context.Context, tool, commit string, round int) (sample, error) {
	db, schema := b.topo.Database, "tpcc"
	if tool == goTPC {
		db, schema = gotpcDB, "public"
	}
	if _, err := b.exec(ctx, b.topo.Database, "CHECKPOINT"); err != nil {
		return sample{}, err
	}
	if err := b.quiet(ctx, db); err != nil {
		return sample{}, err
	}
	before, err := b.read(ctx, db, schema)
	if err != nil {
		return sample{}, err
	}
	var s sample
	results := filepath.Join(b.work, "results", commit, fmt.Sprint(round), strings.ReplaceAll(tool, " ", "-"))
	name, args := b.gotpc, append(b.gotpcArgs("run"), "-T", strconv.Itoa(b.vus), "--time", fmt.Sprintf("%ds", b.secs), "--interval", "1000s")
	if tool != goTPC {
		mode := "functions"
		if tool == agClient {
			mode = "client"
		}
		name, args = b.bin, []string{"tpcc", "run", "--primary", b.topo.ConnString(b.topo.Primary(), ""), "--mode", mode,
			"--vus", strconv.Itoa(b.vus), "--rampup", "0s", "--duration", fmt.Sprintf("%ds", b.secs), "--sample=false",
			"--results", results}
	}
	t0 := time.Now()
	out, cpu, err := harness.Run(ctx, b.env, name, args...)
	s.wall, s.driverCPU = time.Since(t0), cpu
	if err != nil {
		return s, err
	}
	if err := b.quiet(ctx, db); err != nil {
		return s, err
	}
	after, err := b.read(ctx, db, schema)
	if err != nil {
		return s, err
	}
	if tool == goTPC {
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
	// go-tpc's server transactions are about twice its transactions.
	s.srvNOPM, s.srvTPM = no/min, tx/min
	s.serverCPU = after.cpu - before.cpu
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
