package commands

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// TestTPCCTerminals runs tpcc run --terminals on a real cluster: bad pools are refused with
// nothing written; a hundred terminals are served by no more backends than the pool's
// sessions (pg_stat_activity, watched through the run); their think times follow clause
// 5.2.5.4's truncated negative exponential; and a pool of one session, deliberately too
// small, shows the wait in the monitor's queue inside the response times.
func TestTPCCTerminals(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	target := []string{"--cluster", topo.Name, "-d", db}
	cli := func(args ...string) (int, string, string) { return e2etest.Run(t, env, append(args, target...)...) }
	if code, out, errs := cli("tpcc", "build", "--warehouses", "1", "--seed", "3"); code != 0 {
		t.Fatalf("build: exit %d, %q %q", code, out, errs)
	}
	results := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--terminals", "2", "--sessions", "4"}, "--terminals 2: fewer than the pool's --sessions 4"},
		{[]string{"--terminals", "1000", "--sessions", "900"}, "--sessions 900: needs 901 connections"},
	} {
		args := append([]string{"tpcc", "run", "--duration", "2s", "--results", results}, c.args...)
		if code, _, errs := cli(args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, errs, c.want)
		}
	}
	e2etest.WantNothing(t, filepath.Join(results, "*"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	watch, err := pgx.Connect(ctx, topo.ConnString(topo.Primary(), db))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)

	const terminals, sessions, scale = 100, 4, 0.01
	proc := e2etest.Start(t, env, append([]string{"tpcc", "run", "--terminals", "100", "--sessions", "4",
		"--think-scale", "0.01", "--rampup", "1s", "--duration", "6s", "--results", results}, target...)...)
	seen, most := watchBackends(t, ctx, watch, db, proc)
	if code := proc.Wait(t, time.Minute); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, proc.Stdout, proc.Stderr)
	}
	if !seen || most > sessions {
		t.Errorf("monitor's backends: seen %v, at most %d at once; want seen, at most %d for %d terminals", seen, most, sessions, terminals)
	}
	out := proc.Stdout.String()
	// The load is said as terminals over the pool's sessions, in the progress and the tables.
	if errs := proc.Stderr.String(); !strings.Contains(errs, "step 1/1 100 terminals over 4 sessions #1: ") {
		t.Errorf("progress does not say the terminals over the sessions:\n%s", errs)
	}
	for _, want := range []string{"terminals: 100 on 1 warehouses (100 per warehouse) over 4 sessions", "step 1: 100 terminals over 4 sessions,", "terminals/sessions",
		"OUTSIDE the specification", "keying and think times scaled by 0.01", "response p90", "tpmC", "driver memory: peak RSS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	r := e2etest.ReadOneResult(t, results)
	ts := terminalsOf(t, r)
	// The step's load is its terminals and sessions; it has no VUs (absent, never the pool's 4).
	if st := r.Steps[0]; st.VUs != 0 || st.Params[result.TerminalsKnob] != "100" || st.Params[result.SessionsKnob] != "4" || r.Meta.Config["vus"] != nil {
		t.Errorf("step: %d VUs, params %v, config vus %v", st.VUs, st.Params, r.Meta.Config["vus"])
	}
	if ts.Terminals != terminals || ts.Sessions != sessions || ts.Warehouses != 1 || ts.ThinkScale != scale || ts.TerminalRuleHolds() {
		t.Errorf("terminals section %+v", ts)
	}
	if d := ts.Driver; d.PeakRSSBytes == nil || *d.PeakRSSBytes <= 0 || d.HeapBytes <= 0 || d.GoSysBytes < d.HeapBytes {
		t.Errorf("driver memory %+v", d)
	}
	checkThinkTimes(t, ts, scale)
}

// watchBackends counts the monitor's sessions on db in pg_stat_activity until the run has
// printed where its result is (its sessions are closed by then): whether any was seen and
// the most at once.
func watchBackends(t *testing.T, ctx context.Context, watch *pgx.Conn, db string, proc *e2etest.Proc) (seen bool, most int) {
	t.Helper()
	for !strings.Contains(proc.Stdout.String(), "result: ") {
		var n int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`,
			db, tpcc.MonitorAppName).Scan(&n); err != nil {
			t.Fatalf("watch pg_stat_activity: %v\nstdout %s\nstderr %s", err, proc.Stdout, proc.Stderr)
		}
		seen, most = seen || n > 0, max(most, n)
		select {
		case <-ctx.Done():
			t.Fatalf("the run did not end\nstdout %s\nstderr %s", proc.Stdout, proc.Stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return seen, most
}

// terminalsOf is a run's one step's terminals section.
func terminalsOf(t *testing.T, r *result.Result) *result.TerminalsStep {
	t.Helper()
	if len(r.Steps) != 1 {
		t.Fatalf("%d steps", len(r.Steps))
	}
	ts, err := r.Steps[0].Terminals()
	if err != nil || ts == nil {
		t.Fatalf("terminals section: %v, %v", ts, err)
	}
	return ts
}

// checkThinkTimes holds the think times drawn to clause 5.2.5.4's negative exponential of
// the clause's mean (scaled), truncated at ten means: for New-Order and Payment, which have
// hundreds of draws, the mean, the median (ln 2 of the mean) and the 90th percentile (ln 10
// of it) within a generous 25%, and no draw above the truncation.
func checkThinkTimes(t *testing.T, ts *result.TerminalsStep, scale float64) {
	t.Helper()
	for _, k := range []tpcc.Kind{tpcc.NewOrder, tpcc.Payment} {
		h := ts.Think[k.String()]
		mean := 12e6 * scale // both 12 s (clause 5.2.5.7), in microseconds
		if h.Count < 100 {
			t.Errorf("%s: %d think times drawn, want 100 or more", k, h.Count)
			continue
		}
		for _, q := range []struct {
			name      string
			got, want float64
		}{{"mean", h.Mean, mean}, {"p50", float64(h.P50), math.Ln2 * mean}, {"p90", float64(h.P90), math.Ln10 * mean}} {
			if math.Abs(q.got-q.want) > 0.25*q.want {
				t.Errorf("%s: think time %s %.0fµs, want %.0fµs ± 25%% (%d draws)", k, q.name, q.got, q.want, h.Count)
			}
		}
		if float64(h.Max) > 10*mean*1.001 {
			t.Errorf("%s: think time max %dµs above the truncation at %.0fµs", k, h.Max, 10*mean)
		}
	}
}

// TestTPCCTerminalsQueue runs a hundred terminals on a pool of one session, far too small for
// what they ask (keying and think times scaled to a thousandth): requests queue in the
// monitor, and the response times hold the queue's wait.
func TestTPCCTerminalsQueue(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	target := []string{"--cluster", topo.Name, "-d", db}
	if code, out, errs := e2etest.Run(t, env, append([]string{"tpcc", "build", "--warehouses", "1", "--seed", "4"}, target...)...); code != 0 {
		t.Fatalf("build: exit %d, %q %q", code, out, errs)
	}
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, append([]string{"tpcc", "run", "--terminals", "100", "--sessions", "1",
		"--think-scale", "0.001", "--rampup", "1s", "--duration", "3s", "--results", results}, target...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	r := e2etest.ReadOneResult(t, results)
	ts := terminalsOf(t, r)
	q := ts.QueueWait[tpcc.NewOrder.String()]
	no := r.Steps[0].Ops[tpcc.NewOrder.String()]
	if q.Count == 0 || no == nil || no.Count == 0 {
		t.Fatalf("no New-Orders queued or answered: queue %+v, ops %+v", q, no)
	}
	// A hundred terminals each asking about every 21 ms against one session: a request
	// waits behind most of the others.
	if q.P50 < 1000 {
		t.Errorf("New-Order queue wait p50 %dµs, want 1 ms or more with one session for 100 terminals", q.P50)
	}
	t.Logf("New-Order: %d queue waits, p50 %dµs; %d responses, p50 %dµs", q.Count, q.P50, no.Count, no.Latency.P50)
	// The waits are those of the transactions the response times are of (the wait is part
	// of each), whatever the window's edges cut.
	if q.Count != no.Count {
		t.Errorf("%d New-Order queue waits, %d response times: not the same transactions", q.Count, no.Count)
	}
	if no.Latency.P50 < q.P50 {
		t.Errorf("New-Order response p50 %dµs below its queue wait p50 %dµs: the wait is not in the response time", no.Latency.P50, q.P50)
	}
}
