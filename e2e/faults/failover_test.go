package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// faultFigures checks what a step through a fault must show: the errors by SQLSTATE with
// their times inside the window, the lost sessions made again, and operations per second
// both before and after the fault (never a silent zero).
func faultFigures(t *testing.T, st *result.Step) {
	t.Helper()
	if len(st.Errors) == 0 {
		t.Errorf("step %d: no errors recorded through the fault", st.Index+1)
	}
	for _, e := range st.Errors {
		if e.Count <= 0 || e.First.Before(st.Window.Start) || e.Last.After(st.Window.End) || e.SQLState == "" {
			t.Errorf("step %d: error class %+v outside the window %v–%v", st.Index+1, e, st.Window.Start, st.Window.End)
		}
	}
	if st.Reconnects == nil || st.Reconnects.Count == 0 {
		t.Errorf("step %d: reconnects %+v", st.Index+1, st.Reconnects)
	}
	ts := st.Throughput["*"]
	if n := len(ts.V); n < 4 || ts.V[0] == 0 || ts.V[n-1] == 0 {
		t.Errorf("step %d: throughput per second %v: want operations before and after the fault", st.Index+1, ts.V)
	}
}

// cutByFault checks a run through a fault that lost sessions: it exits 1, and its step and
// the run are incomplete, cut by the fault, with every figure still in the result; its
// analysis names the fault, never a saturated resource or a Little's law that fails.
func cutByFault(t *testing.T, code int, out, errs, results string) *result.Result {
	t.Helper()
	if !strings.Contains(out, "! incomplete: ") || strings.Contains(out, "! littles-law") || !strings.Contains(out, "saturated: Not judged: ") {
		t.Errorf("the analysis does not name the fault, or judges the step it cut:\n%s", out)
	}
	if code != 1 {
		t.Errorf("exit %d after a step cut by a fault, want 1\n%s\n%s", code, out, errs)
	}
	res := e2etest.ReadOneResult(t, results)
	if len(res.Steps) != 1 {
		t.Fatalf("%d steps", len(res.Steps))
	}
	if st := res.Steps[0]; res.Complete || st.Complete || !strings.HasPrefix(st.IncompleteReason, result.FaultPrefix) {
		t.Errorf("run complete %v (%s), step complete %v (%s): want the step incomplete, cut by a fault", res.Complete, res.IncompleteReason, st.Complete, st.IncompleteReason)
	}
	return res
}

// The stress runs through a fault are of a fixed number of operations at a fixed rate: the
// step lasts at least throughOps/throughRate (8 s) however fast the machine, so a fault 2.5 s
// after the load starts falls inside it, and it ends only once every operation is done, so
// operations come after the fault however long a failover takes on a busy machine (one took
// more than the 5.5 s a window of 8 s had left). The operations the outage held up start
// late, and their latency counts from when they were due.
const (
	throughOps  = 3200
	throughRate = "400"
)

// throughIterations is --iterations for a stress of threads VUs through a fault: throughOps
// in all.
func throughIterations(threads int) string { return strconv.Itoa(throughOps / threads) }

// A failover during stress through a listener: the sessions lost on the old primary are
// made again on the new one; the step records its errors by SQLSTATE with their times, the
// reconnects and the throughput on both sides of the fault, and every session made where it
// landed, with the operations each node ran (only the last one was kept, and the old
// primary's operations counted nowhere). A fault cut the step: it is incomplete (exit 1).
func TestStressThroughAFailover(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	lcs := e2etest.HandmadeListener(t, h, "")
	results := t.TempDir()
	wait := e2etest.AfterLoadStarts(t, h, 0, 2500*time.Millisecond, e2etest.Failover(h))
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress", "--listener", lcs,
		"-q", "SELECT 1", "--threads", "2", "--rate", throughRate, "--iterations", throughIterations(2), "--max-errors", "0", "--sample=false", "--results", results)
	wait()
	res := cutByFault(t, code, out, errs, results)
	faultFigures(t, &res.Steps[0])
	landedOnBoth(t, h, &res.Steps[0])
	t.Logf("sessions: %s", landings(&res.Steps[0]))
	if old := fmt.Sprintf("127.0.0.1:%d (primary) 2 (", h.Ports[0]); !strings.Contains(out, old) {
		t.Errorf("the output does not show the old primary's sessions and operations (%q):\n%s", old, out)
	}
	if !strings.Contains(out, "sessions lost") || !strings.Contains(out, "errors ") {
		t.Errorf("the footer does not show the fault:\n%s", out)
	}
	if errs := res.Steps[0].Errors; len(errs) > 0 { // none is an error faultFigures reported
		reportShowsFaults(t, results, errs[0].SQLState)
	}
}

// landedOnBoth checks the sessions of a step through a failover from node 0 to node 1 of
// h: each of its VUs' sessions on the old primary and the one made again on the new, each
// node with the operations run there, adding up to the step's.
func landedOnBoth(t *testing.T, h *clustertest.Handmade, st *result.Step) {
	t.Helper()
	var sessions int
	var ops int64
	on := map[int]int64{}
	for _, s := range st.Sessions {
		sessions += s.Count
		if s.Ops == nil {
			t.Errorf("sessions %+v: operations not placed for a worker of one session", s)
			continue
		}
		ops += *s.Ops
		for i, port := range h.Ports {
			if strings.HasSuffix(s.Node, ":"+strconv.Itoa(port)) {
				on[i] += *s.Ops
			}
		}
	}
	tot := st.Totals()
	if sessions < 2*st.VUs || on[0] <= 0 || on[1] <= 0 || ops != tot.Count+tot.Errors {
		t.Errorf("sessions %s: want %d VUs' sessions on the old primary and again on the new, with their %d operations", landings(st), st.VUs, tot.Count+tot.Errors)
	}
}

// landings prints a step's sessions for a message.
func landings(st *result.Step) string {
	var parts []string
	for _, s := range st.Sessions {
		ops := "–"
		if s.Ops != nil {
			ops = strconv.FormatInt(*s.Ops, 10)
		}
		parts = append(parts, fmt.Sprintf("%s (standby %v): %d sessions, %s ops", s.Node, s.InRecovery, s.Count, ops))
	}
	return strings.Join(parts, "; ")
}

// reportShowsFaults renders the results with agbench report and checks that the text and
// the HTML show the step's failed operations (by SQLSTATE) and lost sessions, and that,
// without the servers' MB/s (no sampler through a listener), no column claims it: the
// client's bytes received are "MB/s recv".
func reportShowsFaults(t *testing.T, results, sqlstate string) {
	t.Helper()
	html := filepath.Join(t.TempDir(), "r.html")
	code, out, errs := e2etest.Run(t, nil, "report", results, "-o", html)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"text": out, "HTML": string(b)} {
		if !strings.Contains(text, "failed operations and lost sessions") || !strings.Contains(text, "errors "+sqlstate) ||
			!strings.Contains(text, "sessions lost") {
			t.Errorf("the report's %s does not show the fault (%s):\n%s", where, sqlstate, out)
		}
	}
	if strings.Count(out, "MB/s") != strings.Count(out, "MB/s recv") || !strings.Contains(out, "MB/s recv") {
		t.Errorf("the report shows the client's bytes as the servers' MB/s:\n%s", out)
	}
	// agbench compare names the faults beside the figures that include them.
	runs, _ := filepath.Glob(filepath.Join(results, "*"))
	code, out, errs = e2etest.Run(t, nil, "compare", runs[0], runs[0])
	if code != 0 || !strings.Contains(out, "faults") || !strings.Contains(out, " errors ("+sqlstate) || !strings.Contains(out, "B: ") ||
		!strings.Contains(out, "not compared: A left out, incomplete: "+result.FaultPrefix) {
		t.Errorf("compare: exit %d, the faults not named or the step cut by one compared:\n%s\n%s", code, out, errs)
	}
}

// A failover during tpcc run through a listener: NOPM is measured (never 0 for a run that
// did New-Orders), the errors and reconnects are in the result and on the terminal, every
// session made is counted where it landed, with its transactions, and the step cut by the
// failover is incomplete.
func TestTPCCThroughAFailover(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	env := map[string]string{"AGBENCH_HOME": t.TempDir()}
	code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--primary", h.ConnString(0, clustertest.HandmadeApp), "--warehouses", "1")
	if code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "lacks pg_checkpoint") || !strings.Contains(out, "checkpoint – (none") { // an ordinary login may not checkpoint: said, not failed, and not timed as 0.0s
		t.Errorf("build output does not say the checkpoint was skipped:\n%s", out)
	}
	lcs := e2etest.HandmadeListener(t, h, "")
	results := t.TempDir()
	// 2 s after its first New-Order leaves 7 s of the 9 s window for the failover and the
	// operations after it.
	wait := e2etest.AfterNewOrdersOn(t, h.Admin(context.Background(), t, 0), 2*time.Second, e2etest.Failover(h))
	code, out, errs = e2etest.Run(t, env, "tpcc", "run", "--listener", lcs, "--vus", "2", "--rampup", "0s", "--duration", "9s",
		"--max-errors", "0", "--sample=false", "--results", results)
	wait()
	res := cutByFault(t, code, out, errs, results)
	st := &res.Steps[0]
	faultFigures(t, st)
	landedOnBoth(t, h, st)
	if nopm, ok := st.Counters["nopm"]; !ok || nopm <= 0 {
		t.Errorf("NOPM %v (%v) after a run that did New-Orders", nopm, ok)
	}
	if strings.Contains(out, "\n2  0  ") {
		t.Errorf("a zero NOPM is printed:\n%s", out)
	}
}

// A standby stopped during a read-intent stress through a listener with a load-balanced
// set: the sessions on it move to the other standby; none lands on the primary; the step
// is cut by the fault.
func TestStressStandbyStoppedMidRun(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 2)
	lcs := e2etest.HandmadeListener(t, h, "(('standby1','standby2'),'primary')")
	results := t.TempDir()
	wait := e2etest.AfterLoadStarts(t, h, 1, 2500*time.Millisecond, func(ctx context.Context) error { return h.Stop(ctx, 1) })
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress", "--listener", lcs, "--intent", "read-only",
		"-q", "SELECT 1", "--threads", "4", "--rate", throughRate, "--iterations", throughIterations(4), "--max-errors", "0", "--sample=false", "--results", results)
	wait()
	res := cutByFault(t, code, out, errs, results)
	st := &res.Steps[0]
	faultFigures(t, st)
	for _, s := range st.Sessions {
		if !s.InRecovery {
			t.Errorf("a read-intent session landed on the primary: %+v", s)
		}
	}
}

// A failover during a read-intent stress through a listener. The listener ends
// the read-intent sessions on the promoted standby (as SQL Server's listener drops its
// connections); the workers make them again through it, routed by the list (the default:
// every standby, then the primary: here the new primary), and the step records the
// errors and the reconnects rather than going on silently on what became a primary.
func TestStressReadIntentThroughAPromotion(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	lcs := e2etest.HandmadeListener(t, h, "")
	results := t.TempDir()
	wait := e2etest.AfterLoadStarts(t, h, 1, 2500*time.Millisecond, e2etest.Failover(h))
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress", "--listener", lcs, "--intent", "read-only",
		"-q", "SELECT 1", "--threads", "2", "--rate", throughRate, "--iterations", throughIterations(2), "--max-errors", "0", "--sample=false", "--results", results)
	wait()
	st := &cutByFault(t, code, out, errs, results).Steps[0]
	faultFigures(t, st)
	remade := 0
	for _, s := range st.Sessions { // the sessions on the standby, and those made again on it promoted
		if !strings.HasSuffix(s.Node, strconv.Itoa(h.Ports[1])) {
			t.Errorf("a read-intent session landed off the standby (port %d): %+v", h.Ports[1], s)
		}
		if !s.InRecovery {
			remade += s.Count
		}
	}
	if remade < st.VUs {
		t.Errorf("sessions %s: want the %d made again on the new primary", landings(st), st.VUs)
	}
	if !strings.Contains(out, "sessions lost") {
		t.Errorf("the footer does not show the lost sessions:\n%s", out)
	}
}

// A fresh listener facing two writable nodes of a hand-made cluster (the standby promoted,
// the old primary started again as it was) sends writes to the newer timeline only.
func TestFreshListenerWritesToTheNewerPrimary(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 1)
	ctx := context.Background()
	if err := e2etest.Failover(h)(ctx); err != nil {
		t.Fatal(err)
	}
	h.Start(ctx, t, 0) // no standby.signal: the old primary is writable again
	lcs := e2etest.HandmadeListener(t, h, "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := pgx.Connect(ctx, lcs)
		if err == nil {
			var port int
			var inRecovery bool
			err = c.QueryRow(ctx, "SELECT inet_server_port(), pg_is_in_recovery()").Scan(&port, &inRecovery)
			c.Close(ctx)
			if err == nil {
				if port != h.Ports[1] || inRecovery {
					t.Fatalf("a write session landed on port %d (in recovery %v); the newer primary is on %d", port, inRecovery, h.Ports[1])
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write session through the listener: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Mid-run, one standby is promoted beside a primary that goes on (a second writable node) and
// the other is stopped. The step says which node changed role and when (sessions that landed
// on it ran on a primary after; it said nothing, the sessions table still called it a
// standby), and when the sampler lost the stopped one (it said "node standby2: unexpected
// EOF"; a loss first seen by the closing reading was worded so too), in the output and the
// result. The load's query waits for an advisory lock the
// test holds from before the fault until 2 s after it (the samplers' readings of every
// second then see its outcome), and the run is of a fixed number of operations, so the
// window lasts until after that however long a promotion takes on a busy machine (a 6 s
// window left 4 s for both).
func TestStressStandbysPromotedAndLostMidRun(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 2)
	results := t.TempDir()
	ctx := context.Background()
	locker := h.Admin(ctx, t, 0)
	defer locker.Close(ctx)
	wait := e2etest.AfterLoadStarts(t, h, 0, 2*time.Second, func(ctx context.Context) error {
		if _, err := locker.Exec(ctx, `SELECT pg_advisory_lock(7)`); err != nil {
			return err
		}
		if err := h.Promote(ctx, 1); err != nil {
			return err
		}
		if err := h.Stop(ctx, 2); err != nil {
			return err
		}
		time.Sleep(2 * time.Second)
		_, err := locker.Exec(ctx, `SELECT pg_advisory_unlock(7)`)
		return err
	})
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress", "--primary", h.ConnString(0, clustertest.HandmadeApp),
		"--standby", h.ConnString(1, clustertest.HandmadeApp), "--standby", h.ConnString(2, clustertest.HandmadeApp),
		"-q", "SELECT pg_advisory_xact_lock_shared(7)", "--threads", "1", "--rate", "200", "--iterations", "1200", "--results", results)
	wait()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	warnings := strings.Join(e2etest.ReadOneResult(t, results).Steps[0].Warnings, "\n")
	for _, want := range []string{"standby1 was promoted during the window", "node standby2: lost "} {
		if !strings.Contains(out, want) || !strings.Contains(warnings, want) {
			t.Errorf("%q not in the output and the result's warnings:\n%s\n%q", want, out, warnings)
		}
	}
}

// A standby frozen (SIGSTOP) for 5 s in the middle of a read-intent stress through a
// listener that balances sessions over two standbys: the VUs whose sessions landed on it
// complete nothing while the others go on, so the step never stalls; vu-stalled names the
// VU and the node its session was on, and the run exits 0.
func TestStressStandbyFrozenMidRun(t *testing.T) {
	t.Parallel()
	h := clustertest.NewHandmade(t, 2)
	lcs := e2etest.HandmadeListener(t, h, "(('standby1','standby2'),'primary')")
	results := t.TempDir()
	wait := e2etest.AfterLoadStarts(t, h, 1, 3*time.Second, e2etest.Freeze(h, 1, 5*time.Second))
	code, out, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": t.TempDir()}, "stress", "--listener", lcs, "--intent", "read-only",
		"-q", "SELECT 1", "--threads", "4", "--duration", "12s", "--sample=false", "--results", results)
	wait()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	frozen := fmt.Sprintf("127.0.0.1:%d", h.Ports[1]) // the listener's sessions are named by address
	st := e2etest.ReadOneResult(t, results).Steps[0]
	stuck := 0
	for _, q := range st.VUQuiet {
		if q.To-q.From < 3 {
			continue
		}
		stuck++
		if q.Node != frozen {
			t.Errorf("a VU on %s made no progress for %.1f s; only %s was frozen (sessions %+v)", q.Node, q.To-q.From, frozen, st.Sessions)
		}
	}
	if stuck == 0 || stuck == st.VUs || !strings.Contains(out, "! vu-stalled: ") || !strings.Contains(out, "(on "+frozen+")") {
		t.Errorf("%d of %d VUs without progress for 3 s or more (sessions %+v, stretches %+v); want those on %s named\n%s", stuck, st.VUs, st.Sessions, st.VUQuiet, frozen, out)
	}
}
