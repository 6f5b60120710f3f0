package experiment

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload"
	"github.com/agbench/agbench/internal/workload/stress"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// stressLoad is a short stress experiment of 2 threads against the cluster's primary; each
// operation inserts the time its transaction began into the table ops.
func stressLoad(t *testing.T, topo *cluster.Topology, step runner.StepSpec) (*Load, *stress.Stress) {
	t.Helper()
	c, err := topo.Connect(context.Background(), topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), "CREATE TABLE ops (at timestamptz)"); err != nil {
		t.Fatal(err)
	}
	l := &Load{Command: "stress",
		Target: &target.Target{Topo: topo, Primary: topo.ConnString(topo.Primary(), "")}, Intent: target.ReadWrite,
		Sweep: runner.Sweep{Axes: []runner.Axis{{Name: "threads", Values: []string{"2"}}}, Seed: 1},
		Step:  step}
	return l, stress.New(stress.Config{Queries: []string{"INSERT INTO ops VALUES (now())"}, Connect: l.Connector()})
}

// runLoad runs the load of w through the contract, its ticks shown to progress.
func runLoad(t *testing.T, ctx context.Context, l *Load, w workload.Workload, progress func(runner.Progress)) (*Outcome, error) {
	l.Workload = w
	return Run(ctx, l, Setup{Version: "test", Args: strings.Fields(l.Command), Results: t.TempDir(), Events: func(e Event) {
		if p, ok := e.(runner.Progress); ok {
			progress(p)
		}
	}})
}

// A step that outlasts a restart of the primary however long the restart takes: VUs × 150
// operations at 50 a second. The window lasts 6 s on an idle machine, and the operations
// scheduled while the server is down run when the sessions are back, so the step always
// has operations after the restart (a step of a duration ended while a restart under load
// still ran: its sessions "lost and not made again by the window's end").
var restartStep = runner.StepSpec{Iterations: 150, Rate: 50, MaxErrors: 100}

// restartOnceMeasuring returns a progress hook that restarts the primary (a fast shutdown,
// then a start) at the first tick of the measured window with operations done, once, and
// the channel that is closed when the primary is back. The restart is in the window
// whatever the run took to start (a fixed delay from the run's start once came before it).
func restartOnceMeasuring(t *testing.T, ctx context.Context, topo *cluster.Topology) (func(runner.Progress), <-chan struct{}) {
	back := make(chan struct{})
	var once sync.Once
	return func(p runner.Progress) {
		if !p.Measuring || p.Ops == 0 {
			return
		}
		once.Do(func() {
			go func() {
				defer close(back)
				name := topo.Primary().Name
				if err := topo.StopNode(ctx, name); err != nil {
					t.Error(err)
				}
				if err := topo.StartNode(ctx, name); err != nil {
					t.Error(err)
				}
			}()
		})
	}, back
}

// A restart of the primary in the middle of a stress step: the step records the errors by
// SQLSTATE with their times, the sessions lost and made again, and operations after the
// restart. A fault cut the step: it is incomplete, with its reason, and so is the run (exit
// 1), though operations succeeded on both sides of the restart.
func TestStressSurvivesARestart(t *testing.T) {
	topo := clustertest.New(t, clustertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, w := stressLoad(t, topo, restartStep)
	defer w.Close()
	restart, back := restartOnceMeasuring(t, ctx, topo)
	out, err := runLoad(t, ctx, l, w, restart)
	<-back
	cutByFault(t, out, err)
	res := out.Result
	st := res.Steps[0]
	tot := st.Totals()
	t.Logf("ops %d errors %d; classes %+v; reconnects %+v", tot.Count, tot.Errors, st.Errors, *st.Reconnects)
	// One failed operation per session lost (the server's 57P01 as it shut down, or a
	// broken connection), not a flood of "conn closed".
	if tot.Errors < 1 || tot.Errors > 4 {
		t.Fatalf("%d errors, want about one per session", tot.Errors)
	}
	var classed int64
	for _, c := range st.Errors {
		if c.SQLState != "57P01" && c.SQLState != runner.ClassConnectionFailure {
			t.Errorf("error class %+v: want 57P01 or 08006", c)
		}
		if c.First.Before(st.Window.Start) || c.Last.After(st.Window.End) || c.Last.Before(c.First) || c.Message == "" {
			t.Errorf("error class %+v outside the window %v", c, st.Window)
		}
		classed += c.Count
	}
	if classed != tot.Errors {
		t.Fatalf("classes count %d errors, ops %d", classed, tot.Errors)
	}
	r := st.Reconnects
	if r == nil || r.Count < 1 || r.Unrestored != 0 || r.DownSeconds <= 0 || r.Last.After(st.Window.End) {
		t.Fatalf("reconnects %+v", r)
	}
	// Operations succeeded after the sessions came back: rows inserted by the restarted
	// server (their transactions began after it started).
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var before, after int64
	if err := c.QueryRow(ctx, "SELECT count(*) FILTER (WHERE at < pg_postmaster_start_time()), count(*) FILTER (WHERE at > pg_postmaster_start_time()) FROM ops").Scan(&before, &after); err != nil {
		t.Fatal(err)
	}
	// (An insert may commit yet fail for the client as the server shuts down: more rows
	// than operations counted is no fault.)
	if before == 0 || after == 0 || before+after < tot.Count {
		t.Fatalf("rows of %d operations before the restart and %d after it, %d operations counted", before, after, tot.Count)
	}
	var errSum float64
	for _, v := range st.ErrorThroughput["*"].V {
		errSum += v
	}
	if errSum == 0 {
		t.Fatalf("error series %+v", st.ErrorThroughput["*"])
	}
	// The file holds what the run returned.
	got, err := result.Read(out.Path)
	if err != nil || len(got.Steps) != 1 || got.Steps[0].Reconnects == nil || len(got.Steps[0].Errors) == 0 {
		t.Fatalf("result file: %v %+v", err, got)
	}
}

// cutByFault checks a run of one step through a restart: the step ran to its end and was
// measured, but it is incomplete, cut by a fault, and so is the run, whose error says so.
func cutByFault(t *testing.T, out *Outcome, err error) {
	t.Helper()
	if out == nil || len(out.Result.Steps) != 1 {
		t.Fatalf("run: %v, outcome %+v", err, out)
	}
	res, st := out.Result, out.Result.Steps[0]
	if err == nil || !strings.Contains(err.Error(), result.FaultPrefix) || res.Complete || st.Complete ||
		!strings.HasPrefix(st.IncompleteReason, result.FaultPrefix) {
		t.Fatalf("run error %v; run complete %v (%q), step complete %v (%q): want both incomplete, cut by a fault",
			err, res.Complete, res.IncompleteReason, st.Complete, st.IncompleteReason)
	}
}

// A server that is down for the whole measured window: no successful operation, so the
// step and the run are incomplete and the run's error says so (exit 1).
func TestStressServerDownIsIncomplete(t *testing.T) {
	topo := clustertest.New(t, clustertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, w := stressLoad(t, topo, runner.StepSpec{Rampup: 5 * time.Second, Duration: 2 * time.Second})
	defer w.Close()
	// Stopped at the first tick of the ramp-up: the sessions are made, the load runs. The
	// stop is waited for in the hook, which the runner calls from the loop that also opens
	// the window: the window opens with the server down however long the stop takes (a
	// stop still running at the window's start would let operations succeed in it).
	var once sync.Once
	stop := func(runner.Progress) {
		once.Do(func() {
			if err := topo.StopNode(ctx, topo.Primary().Name); err != nil {
				t.Error(err)
			}
		})
	}
	out, err := runLoad(t, ctx, l, w, stop)
	if !errors.Is(err, runner.ErrNoSuccess) || agerr.ExitCode(err) != agerr.ExitFailure {
		t.Fatalf("run: %v, want no successful operation (exit 1)", err)
	}
	res := out.Result
	if res.Complete || res.IncompleteReason == "" || len(res.Steps) != 1 || res.Steps[0].Complete {
		t.Fatalf("complete %v (%q), steps %+v", res.Complete, res.IncompleteReason, res.Steps)
	}
	st := res.Steps[0]
	if st.Totals().Count != 0 || st.Reconnects == nil || st.Reconnects.Unrestored != 2 || st.Reconnects.Failed == 0 {
		t.Fatalf("ops %+v reconnects %+v", st.Totals(), st.Reconnects)
	}
	got, err := result.Read(out.Path)
	if err != nil || got.Complete || got.Steps[0].IncompleteReason == "" {
		t.Fatalf("result file: %v complete %v", err, got.Complete)
	}
}

// A restart of the primary in the middle of a tpcc step (cut by it: incomplete): the
// client's NOPM and TPM are there (they never depended on the server's counters), the sessions are made again, the
// server's NOPM is read on a new session (the districts survive a restart) and its TPM is
// absent with a warning that says why, never 0.
func TestTPCCSurvivesARestart(t *testing.T) {
	topo := clustertest.New(t, clustertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs := topo.ConnString(topo.Primary(), "")
	cfg, err := tpcc.ConnConfig(cs, "--primary")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpcc.Build(ctx, cfg, tpcc.BuildOptions{Warehouses: 1, Loaders: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	w := &tpcc.Workload{Primary: cfg, Mode: tpcc.ModeFunctions, Seed: 1}
	if _, err := w.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	smp, err := w.NewSampler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer smp.Close()
	l := &Load{Command: "tpcc run", Target: &target.Target{Topo: topo, Primary: cs}, Intent: target.ReadWrite,
		Sweep: runner.Sweep{Axes: []runner.Axis{{Name: "vus", Values: []string{"2"}}}, Seed: 1},
		Step:  restartStep, Samplers: []runner.Sampler{smp}}
	restart, back := restartOnceMeasuring(t, ctx, topo)
	out, err := runLoad(t, ctx, l, w, restart)
	<-back
	cutByFault(t, out, err)
	st := out.Result.Steps[0]
	t.Logf("counters %v; errors %+v; reconnects %+v; warnings %q", st.Counters, st.Errors, st.Reconnects, st.Warnings)
	if st.Counters[tpcc.CounterNOPM] <= 0 || st.Counters[tpcc.CounterTPM] <= 0 {
		t.Fatalf("client NOPM %v TPM %v", st.Counters[tpcc.CounterNOPM], st.Counters[tpcc.CounterTPM])
	}
	if _, ok := st.Counters[tpcc.CounterServerTPM]; ok {
		t.Fatalf("server TPM %v across a restart, want absent", st.Counters[tpcc.CounterServerTPM])
	}
	if _, ok := st.Counters[tpcc.CounterServerNOPM]; !ok {
		t.Fatal("server NOPM absent; the districts can be read after the restart")
	}
	warned := false
	for _, w := range st.Warnings {
		warned = warned || strings.Contains(w, "server TPM absent")
	}
	if !warned {
		t.Fatalf("no warning says why server TPM is absent: %q", st.Warnings)
	}
	if st.Reconnects == nil || st.Reconnects.Count < 1 || len(st.Errors) == 0 {
		t.Fatalf("reconnects %+v errors %+v", st.Reconnects, st.Errors)
	}
}
