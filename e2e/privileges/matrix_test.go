package privileges

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// TestPrivilegeMatrix runs every command that connects to a cluster as each login on each
// cluster; see the package's doc comment.
func TestPrivilegeMatrix(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(*testing.T) *world{
		"agbench": madeByAgbench, "hand-built": handBuilt, "patroni": underPatroni,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := mk(t)
			t.Run("tpcc", func(t *testing.T) { tpccCells(t, w) })
			t.Run("side by side", func(t *testing.T) {
				for _, l := range w.logins {
					t.Run("stress/"+l.kind, func(t *testing.T) { t.Parallel(); stressCell(t, w, l) })
					t.Run("listener/"+l.kind, func(t *testing.T) { t.Parallel(); listenerCell(t, w, l) })
				}
				if w.cluster == "" {
					t.Run("readahead", func(t *testing.T) { t.Parallel(); readaheadCell(t, w) })
				}
			})
			if w.patroni != nil {
				t.Run("drill observe", func(t *testing.T) {
					for _, l := range w.logins {
						t.Run(l.kind, func(t *testing.T) { observeCell(t, w, l) })
					}
				})
			}
		})
	}
}

// target is the command line's target for l: the agbench cluster's superuser by --cluster,
// anyone else by connection strings (the standby's too unless primaryOnly).
func (w *world) target(t *testing.T, l login, primaryOnly bool) []string {
	if l.super() && w.cluster != "" {
		return []string{"--cluster", w.cluster}
	}
	p, s := w.roles(t)
	args := []string{"--primary", w.cs(l, p)}
	if !primaryOnly {
		args = append(args, "--standby", w.cs(l, s))
	}
	return args
}

// refusal is a preflight refusal: exit 2 naming the flag, the login and every statement
// in want; it returns the statements the message says to run.
func refusal(t *testing.T, l login, code int, stderr string, flags []string, want ...string) string {
	t.Helper()
	if code != 2 {
		t.Fatalf("%s: exit %d, want 2 (refused at preflight)\n%s", l.kind, code, stderr)
	}
	for _, f := range flags {
		if !strings.Contains(stderr, f+" ") {
			t.Errorf("%s: the refusal does not name %s:\n%s", l.kind, f, stderr)
		}
	}
	for _, s := range append([]string{"the login " + l.user + " (" + l.kind}, want...) {
		if !strings.Contains(stderr, s) {
			t.Errorf("%s: the refusal lacks %q:\n%s", l.kind, s, stderr)
		}
	}
	if strings.Contains(stderr, l.password) {
		t.Errorf("%s: the refusal shows the password", l.kind)
	}
	const run = "run on the primary: "
	i := strings.Index(stderr, run)
	if i < 0 {
		t.Fatalf("%s: the refusal names no statement to run:\n%s", l.kind, stderr)
	}
	grants, _, _ := strings.Cut(stderr[i+len(run):], "\n")
	return grants
}

// grantedAfterRefusal runs args (whose --results is results) as l, which must be refused
// at preflight naming flags and want and leaving nothing in results; then the superuser
// runs exactly the statements the refusal names, and args run again: their outcome.
func (w *world) grantedAfterRefusal(t *testing.T, l login, args []string, results string, flags []string, want ...string) (int, string, string) {
	t.Helper()
	code, _, errs := w.run(t, args...)
	grants := refusal(t, l, code, errs, flags, want...)
	e2etest.WantNothing(t, filepath.Join(results, "*"))
	w.sql(t, grants)
	return w.run(t, args...)
}

// tpccCells: build (refused without CREATE on the database, naming its GRANT, and leaving
// no schema; by the superuser or the database's owner otherwise), then a run, a scan and
// the consistency check as each login: a login without the schema's grants is refused
// naming them (primary and standby), given exactly those, and then runs.
func tpccCells(t *testing.T, w *world) {
	builder := w.logins[0]
	for _, l := range w.logins[1:] {
		if w.ownsDB[l.user] {
			builder = l
			continue
		}
		code, _, errs := w.run(t, append([]string{"tpcc", "build", "--warehouses", "1", "--build-vus", "1"}, w.target(t, l, true)...)...)
		refusal(t, l, code, errs, []string{"--primary"}, fmt.Sprintf("GRANT CREATE ON DATABASE %s TO %s;", w.db, l.user))
		p, _ := w.roles(t)
		c := w.admin(t, p)
		var made bool
		err := c.QueryRow(context.Background(), "SELECT to_regnamespace('tpcc') IS NOT NULL").Scan(&made)
		c.Close(context.Background())
		if err != nil || made {
			t.Fatalf("%s: a refused build made schema tpcc (%v)", l.kind, err)
		}
	}
	code, out, errs := w.run(t, append([]string{"tpcc", "build", "--warehouses", "1", "--build-vus", "1"}, w.target(t, builder, true)...)...)
	if code != 0 || !strings.Contains(out, "built 1 warehouses") {
		t.Fatalf("build as %s: exit %d\n%s\n%s", builder.kind, code, out, errs)
	}
	// A login without pg_checkpoint builds without the closing checkpoint: its time is
	// absent and the note names the privilege.
	if skipped := strings.Contains(out, "checkpoint – (none: see the note)") && strings.Contains(out, "the login lacks pg_checkpoint"); skipped == builder.super() {
		t.Errorf("build as %s: checkpoint skipped %v:\n%s", builder.kind, skipped, out)
	}
	for _, l := range w.logins {
		t.Run(l.kind, func(t *testing.T) {
			runArgs := []string{"tpcc", "run", "--read-intent", "--stale-probe", "--vus", "1", "--rampup", "0s", "--duration", "3s"}
			results := t.TempDir()
			args := append(append(runArgs, w.target(t, l, false)...), "--results", results)
			var code int
			var out, errs string
			if l.super() || l == builder {
				code, out, errs = w.run(t, args...)
			} else {
				// A scan of a table of the schema is refused before it runs, as the run is.
				scode, _, serrs := w.run(t, append([]string{"scan", "--table", "tpcc.item", "--rows", "10", "--results", results},
					w.target(t, l, true)...)...)
				refusal(t, l, scode, serrs, []string{"--primary"}, `may not run query 1 "SELECT`, "GRANT USAGE ON SCHEMA tpcc TO "+l.user+";")
				e2etest.WantNothing(t, filepath.Join(results, "*"))
				code, out, errs = w.grantedAfterRefusal(t, l, args, results, []string{"--primary", "--standby"},
					"GRANT USAGE ON SCHEMA tpcc TO "+l.user+";", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA tpcc TO "+l.user+";")
			}
			if code != 0 {
				t.Fatalf("tpcc run as %s: exit %d\n%s\n%s", l.kind, code, out, errs)
			}
			res := e2etest.ReadOneResult(t, results)
			st := res.Steps[0]
			nopm, server := st.Counters[tpcc.CounterNOPM], st.Counters[tpcc.CounterServerNOPM]
			if nopm <= 0 || math.Abs(nopm-server) > 0.1*server {
				t.Errorf("%s: NOPM %.0f, the server's %.0f", l.kind, nopm, server)
			}
			if st.Counters[tpcc.CounterReadOnStandby] <= 0 {
				t.Errorf("%s: no read transaction ran on the standby: %v", l.kind, st.Counters)
			}
			sampled(t, l, res)
			if grants := staleProbed(t, l, res); grants != "" {
				w.sql(t, grants)
				results = t.TempDir()
				args[len(args)-1] = results
				if code, out, errs = w.run(t, args...); code != 0 {
					t.Fatalf("tpcc run as %s after %s: exit %d\n%s\n%s", l.kind, grants, code, out, errs)
				}
				if staleProbed(t, l, e2etest.ReadOneResult(t, results)) != "" {
					t.Errorf("%s: the stale-read probe did not run after %s", l.kind, grants)
				}
			}
			scanAndCheck(t, w, l)
		})
	}
	if w.cluster != "" {
		t.Run("least grants", func(t *testing.T) { leastGrants(t, w) })
	}
	t.Run("drop", func(t *testing.T) { dropCell(t, w) })
}

// leastGrants: a plain login given only what TPC-C's transactions do (clause 2: New-Order
// inserts orders, new_order and order_line and updates district and stock; Payment updates
// warehouse, district and customer and inserts history; Delivery deletes new_order, locking
// it FOR UPDATE first, and updates orders, order_line and customer; every table read) passes
// the preflight check and runs both modes without an error.
func leastGrants(t *testing.T, w *world) {
	least := login{kind: "plain", user: "least", password: "least-secret"}
	w.sql(t, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s'; GRANT USAGE ON SCHEMA tpcc TO %[1]s;
		GRANT SELECT ON ALL TABLES IN SCHEMA tpcc TO %[1]s;
		GRANT UPDATE ON tpcc.warehouse, tpcc.district, tpcc.customer, tpcc.stock, tpcc.orders, tpcc.order_line, tpcc.new_order TO %[1]s;
		GRANT INSERT ON tpcc.history, tpcc.orders, tpcc.order_line, tpcc.new_order TO %[1]s;
		GRANT DELETE ON tpcc.new_order TO %[1]s;`, least.user, least.password))
	for _, mode := range []string{"functions", "client"} {
		results := t.TempDir()
		code, out, errs := w.run(t, append([]string{"tpcc", "run", "--mode", mode, "--read-intent", "--vus", "1", "--rampup", "0s",
			"--duration", "2s", "--results", results}, w.target(t, least, false)...)...)
		if code != 0 {
			t.Fatalf("--mode %s with the least grants: exit %d\n%s\n%s", mode, code, out, errs)
		}
		if tot := e2etest.ReadOneResult(t, results).Steps[0].Totals(); tot.Count == 0 || tot.Errors != 0 {
			t.Errorf("--mode %s with the least grants: %d transactions, %d errors", mode, tot.Count, tot.Errors)
		}
	}
}

// dropCell: tpcc drop by a login that does not own the schema is refused naming the
// ownership to give; given it, the drop runs.
func dropCell(t *testing.T, w *world) {
	args := append([]string{"tpcc", "drop"}, w.target(t, monitor, true)...)
	code, out, errs := w.grantedAfterRefusal(t, monitor, args, t.TempDir(), []string{"--primary"}, "ALTER SCHEMA tpcc OWNER TO mon;")
	if code != 0 || !strings.Contains(out, "dropped schema tpcc") {
		t.Fatalf("drop as the schema's owner: exit %d\n%s\n%s", code, out, errs)
	}
}

// staleProbed: the superuser's stale-read probe runs (and makes its table in schema
// public); another login's runs only with CREATE there and SELECT, INSERT and TRUNCATE on
// that table, which none has at first: its figures are absent and the run's warning names
// the statements. It returns them ("" when the probe ran).
func staleProbed(t *testing.T, l login, res *result.Result) string {
	t.Helper()
	probe, err := res.Steps[0].StaleProbe(result.StaleEventual)
	if err != nil {
		t.Fatalf("%s: stale-read probe section: %v", l.kind, err)
	}
	const run = "run on the primary: "
	var grants string
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "stale-read probe (eventual): not run: the login "+l.user+" (") && strings.Contains(w, run) {
			grants = w[strings.Index(w, run)+len(run):]
		}
	}
	switch {
	case probe != nil && len(probe.Nodes) > 0 && grants == "":
	case probe == nil && !l.super() && strings.Contains(grants, "GRANT SELECT, INSERT, TRUNCATE ON agbench_stale_probe TO "+l.user+";"):
	default:
		t.Fatalf("%s: stale-read probe %+v; warnings %q", l.kind, probe, res.Warnings)
	}
	return grants
}

// scanAndCheck: a scan of tpcc's items and the consistency check run as l once it has the
// schema's grants.
func scanAndCheck(t *testing.T, w *world, l login) {
	t.Helper()
	results := t.TempDir()
	code, out, errs := w.run(t, append([]string{"scan", "--table", "tpcc.item", "--rows", "1000", "--iterations", "3",
		"--intent", "read-only", "--results", results}, w.target(t, l, false)...)...)
	if code != 0 {
		t.Fatalf("scan as %s: exit %d\n%s\n%s", l.kind, code, out, errs)
	}
	if st := e2etest.ReadOneResult(t, results).Steps[0]; st.Totals().Count != 3 || st.Totals().Errors != 0 {
		t.Errorf("scan as %s: %d scans, %d errors; want 3 and 0", l.kind, st.Totals().Count, st.Totals().Errors)
	}
	code, out, errs = w.run(t, append([]string{"tpcc", "check"}, w.target(t, l, true)...)...)
	if code != 0 || !strings.Contains(out, "consistency conditions hold") {
		t.Fatalf("tpcc check as %s: exit %d\n%s\n%s", l.kind, code, out, errs)
	}
}

// sampled checks the samplers' figures of a load's step against what l may read: the
// login, its privileges, the data directory (pg_read_all_settings) and each standby's lag,
// measured from pg_stat_replication with pg_read_all_stats, else from the WAL positions or
// absent naming pg_read_all_stats; a measured lag is a figure of the step.
func sampled(t *testing.T, l login, res *result.Result) {
	t.Helper()
	st := res.Steps[0]
	smp, err := st.Sample()
	if err != nil || smp == nil {
		t.Fatalf("%s: sampler section: %v", l.kind, err)
	}
	primaries := 0
	for name, n := range smp.Nodes {
		if !l.super() && n.Info.Login != l.user {
			t.Errorf("%s: node %s sampled as %q", l.kind, name, n.Info.Login)
		}
		if n.Info.ReadAllStats != l.readsAllStats() || (n.Info.DataDirectory != "") != l.readsAllStats() {
			t.Errorf("%s: node %s: read_all_stats %v, data directory %q", l.kind, name, n.Info.ReadAllStats, n.Info.DataDirectory)
		}
		if n.Info.InRecovery {
			continue
		}
		primaries++
		if len(n.Lag) == 0 {
			t.Errorf("%s: primary %s says nothing of its standby's lag", l.kind, name)
		}
		for _, lag := range n.Lag {
			switch {
			case lag.Method == result.LagFromStatReplication && l.readsAllStats(),
				lag.Method == result.LagFromPositions && !l.readsAllStats():
				key := result.PGName(name, result.PGStandbyFigure(lag.Standby, "")+result.PGReplayLagSeconds)
				if v, ok := st.Counters[key]; !ok || v < 0 || v > st.Window.Seconds()+60 {
					t.Errorf("%s: %s measured by %s, but figure %s is %v (%v)", l.kind, lag.Standby, lag.Method, key, v, ok)
				}
			case lag.Method == "" && !l.readsAllStats() && strings.Contains(lag.Absent, "pg_read_all_stats"):
			default:
				t.Errorf("%s: lag of %s: %+v", l.kind, lag.Standby, lag)
			}
		}
	}
	if primaries != 1 {
		t.Errorf("%s: %d primaries sampled", l.kind, primaries)
	}
	// A server on this machine whose data_directory the login may not read: its device is
	// not watched, and the run says so naming the privilege.
	hidden := strings.Contains(strings.Join(res.Warnings, "\n"), "not measured: the login "+l.user+" lacks pg_read_all_settings")
	if hidden != !l.readsAllStats() {
		t.Errorf("%s: warned of the hidden data directory %v; warnings %q", l.kind, hidden, res.Warnings)
	}
}

// stressCell: stress --init makes its table and reads it with read intent on the standby.
// A login that neither is a superuser nor owns the database (and so schema public) is
// refused without CREATE on schema public (taken back here: the stale-read probe's cells
// gave it), naming its GRANT, then given it.
func stressCell(t *testing.T, w *world, l login) {
	table := "priv_" + strings.ReplaceAll(l.kind, "_", "")
	results := t.TempDir()
	args := append([]string{"stress", "--init", "100", "--init-table", table, "--query", "SELECT count(*) FROM " + table,
		"--intent", "read-only", "--threads", "1", "--duration", "2s", "--results", results}, w.target(t, l, false)...)
	mayCreate := l.super() || w.ownsDB[l.user]
	if !mayCreate {
		w.sql(t, "REVOKE CREATE ON SCHEMA public FROM "+l.user)
	}
	do := w.run
	if !mayCreate {
		do = func(t *testing.T, args ...string) (int, string, string) {
			return w.grantedAfterRefusal(t, l, args, results, []string{"--primary"}, "GRANT CREATE ON SCHEMA public TO "+l.user+";")
		}
	}
	code, out, errs := do(t, args...)
	if code != 0 {
		t.Fatalf("stress as %s: exit %d\n%s\n%s", l.kind, code, out, errs)
	}
	res := e2etest.ReadOneResult(t, results)
	onStandby := 0
	for _, s := range res.Steps[0].Sessions {
		if s.InRecovery {
			onStandby += s.Count
		}
	}
	if onStandby != 1 {
		t.Errorf("%s: %d sessions on the standby: %+v", l.kind, onStandby, res.Steps[0].Sessions)
	}
	sampled(t, l, res)
}

// listenerCell: a listener probing as l routes l's read-intent session to the standby and
// its read-write one to the primary.
func listenerCell(t *testing.T, w *world, l login) {
	base, err := clustertest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	p, s := w.roles(t)
	args := []string{"listener", "--primary", "primary=" + w.cs(l, p), "--standby", "standby1=" + w.cs(l, s),
		"--listen", fmt.Sprintf("127.0.0.1:%d", base), "--read-only-listen", fmt.Sprintf("127.0.0.1:%d", base+1),
		"--probe-interval", "200ms"}
	if l.super() { // the superuser's connection strings are keyword/value: no NAME=
		args[2], args[4] = w.cs(l, p), w.cs(l, s)
	}
	proc := e2etest.Start(t, w.env, args...)
	for port, wantStandby := range map[int]bool{base: false, base + 1: true} {
		cs := w.cs(l, p)
		if l.super() {
			cs += fmt.Sprintf(" port=%d", port)
		} else {
			cs = strings.Replace(cs, ":"+strconv.Itoa(w.ports[p])+"/", ":"+strconv.Itoa(port)+"/", 1)
		}
		if got := inRecovery(t, cs); got != wantStandby {
			t.Errorf("%s: through port %d in recovery %v, want %v\n%s", l.kind, port, got, wantStandby, proc.Stderr)
		}
	}
	if code := proc.Stop(t); code != 0 {
		t.Errorf("%s: listener exit %d\n%s", l.kind, code, proc.Stderr)
	}
}

// inRecovery connects through cs (waiting for the listener to route, up to a minute) and
// asks pg_is_in_recovery().
func inRecovery(t *testing.T, cs string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		c, err := pgx.Connect(ctx, cs)
		if err == nil {
			var rec bool
			err = c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&rec)
			c.Close(ctx)
			if err == nil {
				return rec
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("through the listener: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readaheadCell: readahead restarts its server, so it refuses a cluster agbench did not
// make, whatever the login, before anything is made.
func readaheadCell(t *testing.T, w *world) {
	p, _ := w.roles(t)
	results := t.TempDir()
	code, _, errs := w.run(t, "readahead", "--primary", w.cs(plain, p), "--results", results)
	if code != 2 || !strings.Contains(errs, "it takes no connection strings") {
		t.Fatalf("readahead on a cluster agbench did not make: exit %d\n%s", code, errs)
	}
	e2etest.WantNothing(t, filepath.Join(results, "*"))
}

// observeCell: a drill observing one switchover that it asks Patroni for, as l: every
// acknowledged commit is checked and none lost. Without CREATE on the current schema (its
// ledger; taken back from the plain login here, which stress was given it) it is refused
// naming the GRANT, then given it.
func observeCell(t *testing.T, w *world, l login) {
	if l == plain {
		w.sql(t, "REVOKE CREATE ON SCHEMA public FROM "+l.user)
	}
	p, s := w.roles(t)
	results := t.TempDir()
	args := []string{"drill", "--fault", "observe", "--primary", w.cs(l, p), "--standby", w.cs(l, s),
		"--patroni", w.patroni[p] + "," + w.patroni[s], "--cycles", "1", "--between", "1s", "--vus", "1", "--read-vus", "1",
		"--results", results}
	do := w.run
	if l == plain {
		do = func(t *testing.T, args ...string) (int, string, string) {
			return w.grantedAfterRefusal(t, l, args, results, []string{"--primary"}, "GRANT CREATE ON SCHEMA public TO "+l.user+";")
		}
	}
	code, out, errs := do(t, args...)
	if code != 0 {
		t.Fatalf("drill observe as %s: exit %d\n%s\n%s", l.kind, code, out, errs)
	}
	run, err := e2etest.ReadOneResult(t, results).DrillRun()
	if err != nil || run == nil || run.CyclesDone != 1 || run.Lost == nil || *run.Lost != 0 || run.Acked == nil || *run.Acked <= 0 {
		t.Fatalf("drill observe as %s: %+v (%v)\n%s", l.kind, run, err, out)
	}
	if np, _ := w.roles(t); np != s {
		t.Errorf("drill observe as %s: node %d accepts writes after the switchover, want %d", l.kind, np, s)
	}
}
