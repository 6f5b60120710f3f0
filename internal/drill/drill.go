package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/links"
	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
)

// Faults a drill injects.
const (
	// FaultPlanned is a planned failover: the primary is shut down cleanly and a standby
	// that replayed all its WAL is promoted.
	FaultPlanned = result.DrillFaultPlanned
	// FaultKillPrimary is SIGKILL of the primary's postmaster; agbench then fails over to
	// the standby that received the most WAL.
	FaultKillPrimary = "kill-primary"
	// FaultFreezePrimary stops the primary's processes (SIGSTOP): alive but silent, so only
	// a timeout notices it (freeze.go).
	FaultFreezePrimary = "freeze-primary"
	// FaultPartitionPrimary cuts the primary off from its standbys on the replication
	// connections, which the drill routes through relays (partition.go).
	FaultPartitionPrimary = "partition-primary"
)

// Faults lists the faults this drill can inject.
var Faults = []string{FaultPlanned, FaultKillPrimary, FaultFreezePrimary, FaultPartitionPrimary, FaultKillStandby, FaultWALFull}

// Defaults and bounds of a drill.
const (
	DefaultWriters    = 8
	DefaultReaders    = 4
	DefaultBetween    = 10 * time.Second
	DefaultCommitWait = 10 * time.Second
	// DefaultDetectTimeout is how long a primary may stay silent before it is taken for failed.
	DefaultDetectTimeout = 2 * time.Second
	MaxCycles            = 1000
	// backWait bounds the wait after a failover for the first write and read to come back.
	backWait = 60 * time.Second
	// tick is the interval of the throughput series.
	tick = time.Second
)

// Options are the choices of a drill.
type Options struct {
	Fault string
	// Workload is the cycles' load: WorkloadLedger (also when empty) or WorkloadTPCC, on a
	// tpcc schema built beforehand (CheckWorkload).
	Workload string
	Cycles   int
	Writers  int
	Readers  int
	// Between is how long the load runs before the fault, and again after the failover.
	Between time.Duration
	// CommitWait is how long an operation may wait for its answer; an unanswered commit is
	// abandoned (its session closed) and counted in doubt.
	CommitWait time.Duration
	// Keep keeps the ledger table at the end.
	Keep bool
	// WALFSSize is the size of the primary's WAL file system for FaultWALFull.
	WALFSSize int64
	// DetectTimeout is how long the primary may stay silent before it is taken for failed
	// and fenced (freeze-primary, partition-primary).
	DetectTimeout time.Duration
	// ObserveWait bounds the wait for a failover by other means in each observe cycle
	// (0: DefaultObserveWait).
	ObserveWait time.Duration
	// Kill is what kill-primary kills on a cluster under Patroni: KillBoth (the default:
	// as a crash of the machine), KillPostmaster or KillPatroni.
	Kill string
	// Hooks are for tests that make a fault worse than the drill's own (nil in commands).
	Hooks *Hooks
	// Samplers measure beside every cycle (the hosts of the nodes, read from their
	// node_exporters), into its step.
	Samplers []Sampler

	relays *links.Relays // partition-primary's, set by Run
	tpcc   *tpccRun      // the tpcc workload's, set by Run
	// syncCause names the setting that decides the new primary's synchronous standbys after
	// a failover, when known ("Patroni synchronous_mode without strict"), set by Run.
	syncCause string
	// async is true when the cluster commits asynchronously: a new primary without a
	// synchronous standby is then no gap (set by Run and RunObserve).
	async bool
}

// Hooks run inside a cycle, for tests.
type Hooks struct {
	// BeforeFault runs after the load's first period, before the fault is injected.
	BeforeFault func(ctx context.Context, c *Cycle) error
	// BeforeFailover runs after a kill, before agbench fails over.
	BeforeFailover func(ctx context.Context, c *Cycle) error
	// Failover replaces agbench's failover after a fault (a failover that forgets to fence,
	// to see the checks fail).
	Failover func(ctx context.Context, t *cluster.Topology) (*cluster.FailoverReport, error)
}

// Cycle is a cycle in progress, as hooks see it.
type Cycle struct {
	N     int
	tally *tally
}

// Acked is the number of commits acknowledged in the cycle so far.
func (c *Cycle) Acked() int64 { return c.tally.ackCount.Load() }

// Validate checks the options, naming the flag of each problem, all at once.
func (o *Options) Validate() error {
	var errs []error
	if !slices.Contains(Faults, o.Fault) && o.Fault != FaultObserve {
		errs = append(errs, agerr.BadInputf("--fault %q: want one of %s, %s", o.Fault, strings.Join(Faults, ", "), FaultObserve))
	}
	if o.Workload != "" && !slices.Contains(Workloads, o.Workload) {
		errs = append(errs, agerr.BadInputf("--workload %q: want one of %s", o.Workload, strings.Join(Workloads, ", ")))
	}
	if o.Workload == WorkloadTPCC && o.Fault == FaultObserve {
		errs = append(errs, agerr.BadInputf("--workload tpcc: not with --fault observe (its checks need agbench's cluster); use the ledger"))
	}
	if o.Cycles < 1 || o.Cycles > MaxCycles {
		errs = append(errs, agerr.BadInputf("--cycles %d: want 1 to %d", o.Cycles, MaxCycles))
	}
	if o.Writers < 1 || o.Writers > 999 {
		errs = append(errs, agerr.BadInputf("--vus %d: want 1 to 999 writers", o.Writers))
	}
	if o.Readers < 0 || o.Readers > 999 {
		errs = append(errs, agerr.BadInputf("--read-vus %d: want 0 to 999", o.Readers))
	}
	if o.Between <= 0 {
		errs = append(errs, agerr.BadInputf("--between %v: must be positive", o.Between))
	}
	if o.CommitWait <= 0 {
		errs = append(errs, agerr.BadInputf("--commit-wait %v: must be positive", o.CommitWait))
	}
	if o.Fault == FaultWALFull {
		errs = append(errs, validateWALFS(o.WALFSSize))
	}
	if silent := o.Fault == FaultFreezePrimary || o.Fault == FaultPartitionPrimary; o.DetectTimeout < 0 || silent && o.DetectTimeout == 0 {
		errs = append(errs, agerr.BadInputf("--detect-timeout %v: must be positive", o.DetectTimeout))
	}
	if o.Kill != "" && !slices.Contains(Kills, o.Kill) {
		errs = append(errs, agerr.BadInputf("--kill %q: want one of %s", o.Kill, strings.Join(Kills, ", ")))
	}
	if o.Kill != "" && o.Fault != FaultKillPrimary {
		errs = append(errs, agerr.BadInputf("--kill %s: only with --fault kill-primary", o.Kill))
	}
	return agerr.Join(errs...)
}

// Check refuses, before any cycle, a drill that cannot run on t: no standby, a node down, or
// a primary whose postmaster agbench cannot verify as its own or may not signal.
func Check(t *cluster.Topology, o Options) error {
	if len(t.Standbys()) == 0 {
		return agerr.BadInputf("cluster %s has no standby: a drill needs one to fail over to (agbench cluster create --standbys 1)", t.Name)
	}
	var errs []error
	for _, n := range t.Nodes {
		if _, err := t.OwnPostmaster(n.Name); err != nil {
			errs = append(errs, agerr.BadInputf("cluster %s: %v (a drill starts on a whole cluster: agbench cluster start %s)", t.Name, err, t.Name))
		} else if pids := t.StoppedProcesses(n.Name); len(pids) > 0 {
			errs = append(errs, agerr.BadInputf("cluster %s: node %s is frozen: processes %s are stopped (SIGSTOP; a drill that did not finish?): resume them with kill -CONT %s",
				t.Name, n.Name, joinInts(pids), joinInts(pids)))
		}
	}
	if o.Fault == FaultWALFull {
		errs = append(errs, checkWALFull(t)...)
	}
	errs = append(errs, checkPatroni(t, o))
	return agerr.Join(errs...)
}

// Recorder is where a drill writes its result as it goes (internal/experiment's Recorder).
type Recorder interface {
	AddStep(result.Step)
	Save() error
}

// Progress receives one line per event of the drill (nil: none).
type Progress func(format string, a ...any)

// Run runs the drill's cycles on t, adding each cycle to rec as a step, and returns the
// run's section (also stored in res). It stops at the first cycle that leaves the cluster
// in a state the next could not start from, and on ctx's end after healing the fault.
func Run(ctx context.Context, t *cluster.Topology, o Options, res *result.Result, rec Recorder, p Progress) (*result.DrillRun, error) {
	if p == nil {
		p = func(string, ...any) {}
	}
	run := &result.DrillRun{Fault: o.Fault, Workload: o.Workload, Commit: t.Commit, Cycles: o.Cycles, Patroni: patroniOf(t, o)}
	if run.Patroni != nil {
		run.Patroni.SynchronousModeStrict, o.syncCause, _ = patroniSync(ctx, t.RESTURLs())
	}
	o.async = t.Commit == cluster.CommitAsync
	if o.Workload == WorkloadTPCC {
		tr, err := readTPCC(ctx, t)
		if err != nil {
			return nil, err
		}
		o.tpcc = tr
	}
	save := func() {
		Summarize(run, res.Steps)
		_ = res.SetExtra(result.ExtraDrill, run) // a DrillRun always encodes
		_ = rec.Save()                           // the recorder keeps the first write error for Finish
	}
	undoPartition, err := preparePartition(ctx, t, &o, p)
	if err != nil {
		return nil, err
	}
	defer undoPartition() // once: also called below, where its error is kept
	undo, err := prepareWALFull(ctx, t, o, p)
	if err != nil {
		return nil, errors.Join(err, undoPartition())
	}
	if o.tpcc == nil { // the tpcc workload writes in the schema the user built
		if err := createLedger(ctx, t); err != nil {
			err = fmt.Errorf("create %s: %w", LedgerTable, err)
			if undo != nil {
				err = errors.Join(err, undo(context.WithoutCancel(ctx)))
			}
			return nil, err
		}
	}
	var runErr error
	for i := 1; i <= o.Cycles; i++ {
		if ctx.Err() != nil {
			runErr = ctx.Err()
			break
		}
		st, err := runCycle(ctx, t, o, i, p)
		if st != nil {
			rec.AddStep(*st)
		}
		save()
		if err != nil {
			runErr = err
			break
		}
	}
	if !o.Keep && o.tpcc == nil {
		if err := DropLedger(context.WithoutCancel(ctx), t); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("drop %s: %w", LedgerTable, err))
		}
	}
	if undo != nil {
		runErr = errors.Join(runErr, undo(context.WithoutCancel(ctx)))
	}
	if err := undoPartition(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	run.Left = Whole(context.WithoutCancel(ctx), t)
	save()
	if runErr == nil && len(run.Failed) > 0 {
		runErr = fmt.Errorf("drill: %s", strings.Join(run.Failed, "; "))
	}
	return run, runErr
}

// runCycle runs one cycle and returns its step. An error means the drill cannot go on.
func runCycle(ctx context.Context, t *cluster.Topology, o Options, n int, p Progress) (*result.Step, error) {
	wURL, rURL, viaListener := connStrings(t)
	start := time.Now()
	l := &load{writeURL: wURL, readURL: rURL, cycle: n, commitWait: o.CommitWait, tpcc: o.tpcc, tally: newTally(start), reg: measure.NewRegistry(start)}
	l.tally.listener = viaListener
	dc := &result.DrillCycle{Cycle: n, Fault: o.Fault, From: t.Primary().Name}
	cyc := &Cycle{N: n, tally: l.tally}
	stopSamplers := sampleCycle(ctx, o.Samplers, start)
	stopTicks := l.ticks(tick)
	l.start(ctx, o.Writers, o.Readers)
	writers := "writers"
	if o.tpcc != nil {
		writers = "TPC-C terminals"
	}
	p("cycle %d: load on %s (%d %s, %d readers) for %v", n, dc.From, o.Writers, writers, o.Readers, o.Between)
	sleep(ctx, o.Between)

	var faultErr error
	if ctx.Err() == nil && o.Hooks != nil && o.Hooks.BeforeFault != nil {
		faultErr = o.Hooks.BeforeFault(ctx, cyc)
	}
	var rep *cluster.FailoverReport
	if ctx.Err() == nil && faultErr == nil {
		rep, faultErr = inject(ctx, t, o, cyc, dc, p)
	}
	if rep != nil {
		failedOver(t, rep, dc, l.tally, p)
		waitBack(ctx, l.tally, o.Readers > 0, backWait)
		sleep(ctx, o.Between)
	}
	injected := rep != nil || (inPlace(o.Fault) && !dc.FaultAt.IsZero())
	if rep == nil && injected {
		waitBack(ctx, l.tally, o.Readers > 0, backWait)
		sleep(ctx, o.Between)
	}
	l.finish()
	end := time.Now()
	stopTicks(end)

	st := l.step(n, o, start, end)
	cctx := context.WithoutCancel(ctx)
	stopSamplers(cctx, st)
	if injected {
		check(cctx, t, l.tally, dc, o.tpcc != nil)
		if rep != nil { // a failover: what the old primary acknowledged after the fault
			l.tally.oldAcks(server{port: t.Node(dc.From).Port}, rep.PromotedAt, dc)
		}
	}
	if rep != nil && rep.To != dc.From && t.Node(rep.To) != nil && !o.async {
		dc.SyncGap = l.tally.syncGap(rep.To, server{port: t.Node(rep.To).Port}, dc.From, o.syncCause, end)
		waitedForOldPrimary(dc)
	}
	l.tally.fill(dc, end)
	if faultErr != nil {
		dc.Problems = append(dc.Problems, faultErr.Error())
	}
	if ctx.Err() != nil && dc.FaultAt.IsZero() {
		dc.Problems = append(dc.Problems, "interrupted before the fault")
	}
	if ctx.Err() != nil {
		st.Complete, st.IncompleteReason = false, "interrupted"
	}
	if err := st.SetExtra(result.ExtraDrill, dc); err != nil {
		return st, err
	}
	return st, cycleEnd(ctx, o, dc, faultErr)
}

// failedOver takes a failover's report into the cycle: the new primary, the failover's own
// time, the old primary's state, the WAL lacked, the fencing and the problems.
func failedOver(t *cluster.Topology, rep *cluster.FailoverReport, dc *result.DrillCycle, ta *tally, p Progress) {
	dc.To = rep.To
	ta.primaryIs(server{port: t.Node(rep.To).Port})
	fs := rep.WriteOutage.Seconds()
	if !rep.Detected.IsZero() && !rep.PromotedAt.IsZero() { // the failover's own time begins at the detection
		fs = rep.PromotedAt.Sub(rep.Detected).Seconds()
	}
	dc.FailoverSeconds = &fs
	dc.OldPrimary = rep.OldPrimary
	if rep.WALLacked != nil || rep.WALLackedNote != "" {
		dc.WALBytesLacked, dc.WALBytesNote = rep.WALLacked, rep.WALLackedNote
	}
	dc.FenceSeconds = since(dc.FaultAt, rep.FencedAt)
	for node, why := range rep.Problems {
		dc.Problems = append(dc.Problems, node+": "+why)
	}
	p("cycle %d: %s is primary (failover %.2fs); old primary %s: %s", dc.Cycle, rep.To, fs, rep.From, rep.OldPrimary)
	syncWait(t, rep, dc, ta)
}

// cycleEnd is why the drill cannot go on after a cycle: the fault's error, the context's
// end, or a cluster the cycle left unfit for another.
func cycleEnd(ctx context.Context, o Options, dc *result.DrillCycle, faultErr error) error {
	switch {
	case faultErr != nil:
		return faultErr
	case ctx.Err() != nil:
		return ctx.Err()
	case (!inPlace(o.Fault) && !oldPrimaryBack(dc)) || len(dc.Writable) != 1 || len(dc.NotStreaming) > 0:
		return fmt.Errorf("cycle %d left the cluster unfit for another: %s", dc.Cycle, strings.Join(dc.Problems, "; "))
	}
	return nil
}

// inject injects the fault and fails over. Once the fault is in, the rest runs to its end
// whatever ctx does: a killed primary is failed over and rejoined, not left down.
func inject(ctx context.Context, t *cluster.Topology, o Options, c *Cycle, dc *result.DrillCycle, p Progress) (*cluster.FailoverReport, error) {
	if t.Patroni != nil {
		return injectPatroni(ctx, t, o, c, dc, p)
	}
	hctx := context.WithoutCancel(ctx)
	switch o.Fault {
	case FaultPlanned:
		dc.FaultAt = time.Now()
		c.tally.fault(dc.FaultAt)
		p("cycle %d: planned failover from %s", c.N, dc.From)
		dc.WALBytesNote = "a planned failover replays all the old primary's WAL before promoting"
		return failover(hctx, t, o, c, cluster.FailoverOptions{})
	case FaultKillPrimary:
		dc.FaultAt = time.Now()
		c.tally.fault(dc.FaultAt)
		if err := t.CrashNode(hctx, dc.From); err != nil {
			return nil, fmt.Errorf("kill %s: %w", dc.From, err)
		}
		c.tally.event(result.EventDetected, time.Now(), "the postmaster's processes are gone")
		p("cycle %d: killed the postmaster of %s (SIGKILL)", c.N, dc.From)
		if o.Hooks != nil && o.Hooks.BeforeFailover != nil {
			if err := o.Hooks.BeforeFailover(hctx, c); err != nil {
				return nil, err
			}
		}
		return failover(hctx, t, o, c, cluster.FailoverOptions{})
	case FaultFreezePrimary:
		return injectFreeze(ctx, t, o, c, dc, p)
	case FaultPartitionPrimary:
		return injectPartition(ctx, t, o, c, dc, p)
	case FaultKillStandby:
		return nil, killStandby(hctx, t, c, dc, p)
	case FaultWALFull:
		return nil, walFull(ctx, t, c, dc, p)
	}
	return nil, fmt.Errorf("fault %q: not implemented", o.Fault)
}

// failover fails t over after a fault: agbench's failover, or the test's (Hooks.Failover),
// and notes in the cycle's timeline when the fault was detected (a silent primary) and when
// the new primary accepted writes.
func failover(ctx context.Context, t *cluster.Topology, o Options, c *Cycle, fo cluster.FailoverOptions) (*cluster.FailoverReport, error) {
	began := time.Now()
	var rep *cluster.FailoverReport
	var err error
	if o.Hooks != nil && o.Hooks.Failover != nil {
		rep, err = o.Hooks.Failover(ctx, t)
	} else {
		rep, err = t.Failover(ctx, fo)
	}
	if rep != nil {
		if !rep.Detected.IsZero() {
			c.tally.event(result.EventDetected, rep.Detected, "no answer within the probe's timeout")
		}
		at := rep.PromotedAt
		if at.IsZero() {
			at = began.Add(rep.WriteOutage)
		}
		c.tally.event(result.EventPromoted, at, rep.To)
	}
	return rep, err
}

// syncWait notes when the old primary rejoined and, when it was the only synchronous standby
// the new primary could have (sync commit, no other standby re-pointed to it), that commits
// waited for it: the new primary was given the synchronous settings before its promotion
// (internal/cluster), so its first commit waits for a synchronous standby, as every commit
// of the old primary did. Under Patroni, synchronous_mode decides, not agbench.
func syncWait(t *cluster.Topology, rep *cluster.FailoverReport, dc *result.DrillCycle, ta *tally) {
	if rep.RejoinedAt.IsZero() {
		return
	}
	// Seen streaming by a poll: the old primary may have confirmed its first commits a little
	// before.
	ta.event(result.EventRejoined, rep.RejoinedAt, rep.From+" seen streaming from "+rep.To)
	if !t.CommitsWaitedForOldPrimary(rep) {
		return
	}
	dc.SyncWait = fmt.Sprintf("%s had no synchronous standby until %s rejoined as one (pg_rewind, start, streaming): commits waited for it",
		rep.To, rep.From)
}

// since is the seconds from a to b, absent when b is zero.
func since(a, b time.Time) *float64 {
	if b.IsZero() {
		return nil
	}
	s := b.Sub(a).Seconds()
	return &s
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// waitBack waits until a write (and a read, when there are readers) that began after the
// fault succeeded, or until the bound or ctx's end.
func waitBack(ctx context.Context, t *tally, reads bool, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		t.mu.Lock()
		back := !t.firstW.IsZero() && (!reads || !t.firstR.IsZero())
		t.mu.Unlock()
		if back {
			return
		}
		sleep(ctx, 10*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
