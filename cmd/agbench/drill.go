package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

func init() { register(newDrillCmd) }

// drillFlags are the flags of `agbench drill` as given.
type drillFlags struct {
	cluster, results, walFSSize string
	// --primary, --standby, --listener, --patroni: a cluster agbench did not make, for
	// --fault observe only (faults go only to agbench's clusters).
	primary, listener, patroni string
	standbys                   []string
	o                          drill.Options
}

func newDrillCmd(a *app) *cobra.Command {
	f := &drillFlags{}
	c := &cobra.Command{
		Use:   "drill",
		Short: "Failover drill: acknowledged commits lost and time without writes, per failover",
		Long: `Measure what a failover costs on a local cluster that agbench made. Each cycle:
a ledger workload runs (--vus writers commit rows with unique ids and remember
every commit the server acknowledged; --read-vus readers read with read intent)
for --between, the fault is injected, agbench fails the cluster over (as a DBA
would), the load goes on for --between, and then the checks:

  every acknowledged commit is on the new primary (lost ids listed); commits sent
  but never acknowledged are counted apart (in doubt, not lost); exactly one node
  accepts writes; the old primary is back as a streaming standby.

Faults:
  planned        agbench cluster failover with the primary up: a clean shutdown,
                 the standby replays all of its WAL, then is promoted
  kill-primary   SIGKILL of the primary's postmaster (only a server this agbench
                 started: checked by the topology, the data folder and the pid);
                 the standby that received the most WAL is promoted, the old
                 primary rewound (pg_rewind) and started as a standby
  freeze-primary SIGSTOP of the primary's postmaster and every child: alive but
                 silent. agbench's failover probes it, takes it for failed after
                 --detect-timeout without an answer, fences it (SIGKILL of every
                 stopped process: none runs again to acknowledge a commit),
                 promotes, and rewinds it into a standby
  partition-primary  the primary cut off from its standbys: the drill routes
                 replication through relays (Toxiproxy, in-process) and makes the
                 primary's silent both ways; clients still reach the primary. When
                 no standby has received from it for --detect-timeout, agbench
                 fences it, promotes, rewinds it; the relay is healed at the end
                 of the cycle, and replication routed directly after the drill

  kill-standby   SIGKILL of a standby's postmaster (the standbys in turn); no
                 failover: agbench starts it again at once and waits until it
                 streams; with one synchronous standby commits wait meanwhile,
                 with ANY 1 of two they go on ("writes blocked s")
  wal-full       the primary's WAL file system full: for the drill its pg_wal
                 moves onto a --wal-fs-size ext4 file system (a loop device;
                 needs root), moved back at the end; each cycle fills it with
                 a ballast file until the server cannot write WAL, then frees
                 it; the server recovers in place (no failover)

With --workload tpcc, --vus TPC-C terminals (client mode, no keying or think
time) replace the writers, on a schema built beforehand (agbench tpcc build);
the checks then are: every acknowledged New-Order's order row is on the new
primary (lost orders listed as warehouse/district/order), and TPC-C's
consistency conditions (clause 3.3.2, as agbench tpcc check) hold there.

Per cycle: commits acknowledged and lost, in doubt, the failover's own time, the
time from the fault to the first write the new primary acknowledged and to the
first successful read, the time until a frozen or cut-off primary was detected
and fenced, writes the old primary acknowledged after the fault, errors by
SQLSTATE. The verdict line sums the cycles.
Ctrl-C stops the load; a frozen primary or a cut link is resumed or healed when
the failover has not begun, else the failover runs to its end first.
Exit status 1 when a check failed (a lost commit, two writable nodes, an old
primary not back, the old primary acknowledging writes after the promotion).`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return agerr.BadInputf("%s: unexpected argument %q (it takes flags only)", c.CommandPath(), args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runDrill(cmd, a, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.cluster, "cluster", "lab", "cluster made by agbench cluster create")
	fl.StringVar(&f.o.Fault, "fault", "", "the fault: "+strings.Join(drill.Faults, ", ")+", or observe (a failover by other means)")
	fl.IntVar(&f.o.Cycles, "cycles", 20, "failovers to run")
	fl.StringVar(&f.o.Workload, "workload", drill.WorkloadLedger, "the load: "+strings.Join(drill.Workloads, " or ")+" (TPC-C terminals on a schema made by agbench tpcc build)")
	fl.IntVar(&f.o.Writers, "vus", drill.DefaultWriters, "writers (each commits ledger rows as fast as it can), or TPC-C terminals with --workload tpcc")
	fl.IntVar(&f.o.Readers, "read-vus", drill.DefaultReaders, "readers (read intent: a standby when there is one)")
	fl.DurationVar(&f.o.Between, "between", drill.DefaultBetween, "load before each fault, and again after each failover")
	fl.DurationVar(&f.o.CommitWait, "commit-wait", drill.DefaultCommitWait, "how long an operation waits for its answer; an unanswered commit is in doubt")
	fl.DurationVar(&f.o.DetectTimeout, "detect-timeout", drill.DefaultDetectTimeout, "freeze-primary, partition-primary: how long the primary may stay silent before it is taken for failed and fenced")
	fl.StringVar(&f.o.Kill, "kill", "", "under Patroni, what kill-primary kills: "+strings.Join(drill.Kills, ", ")+" (default both, as a crash of the machine)")
	fl.BoolVar(&f.o.Keep, "keep", false, "keep the ledger table ("+drill.LedgerTable+") at the end")
	fl.StringVar(&f.walFSSize, "wal-fs-size", "128M", "wal-full: size of the file system made for the primary's pg_wal")
	fl.StringVar(&f.results, "results", "results", "folder for results/<time>-drill/result.json")
	fl.StringVar(&f.primary, "primary", "", "with --fault observe: the primary's connection string, [NAME=]URL, of a cluster agbench did not make")
	fl.StringArrayVar(&f.standbys, "standby", nil, "with --fault observe: a standby's connection string, [NAME=]URL (repeatable)")
	fl.StringVar(&f.listener, "listener", "", "with --fault observe: the writers connect here (a connection string)")
	fl.StringVar(&f.patroni, "patroni", "", "with --fault observe: Patroni REST API URLs, comma-separated, in the order of --primary and --standby; the drill asks Patroni for a switchover each cycle")
	fl.DurationVar(&f.o.ObserveWait, "observe-wait", drill.DefaultObserveWait, "with --fault observe and no --patroni: how long each cycle waits for your failover")
	return validates(c)
}

func runDrill(cmd *cobra.Command, a *app, f *drillFlags) error {
	var errs []error
	urls := f.primary != "" || len(f.standbys) > 0 || f.listener != ""
	if urls && f.o.Fault != drill.FaultObserve {
		errs = append(errs, agerr.BadInputf("--primary/--standby/--listener: a drill injects faults only into servers agbench started; use --cluster NAME (a cluster made by agbench cluster create), or --fault observe to fail such a cluster over by your own means"))
	}
	var ends *drill.Endpoints
	if urls && f.o.Fault == drill.FaultObserve {
		var patroni []string
		if f.patroni != "" {
			var err error
			if patroni, err = parsePatroniURLs(f.patroni); err != nil {
				errs = append(errs, err)
			}
		}
		var err error
		ends, err = drill.NewEndpoints(f.primary, f.standbys, f.listener, patroni)
		errs = append(errs, err)
	} else if f.patroni != "" {
		errs = append(errs, agerr.BadInputf("--patroni: only with --fault observe and --primary/--standby (a --cluster under Patroni gives its REST APIs itself)"))
	}
	if n, err := units.ParseBytes(f.walFSSize); err != nil {
		errs = append(errs, agerr.BadInputf("--wal-fs-size %q: want a size such as 128M", f.walFSSize))
	} else {
		f.o.WALFSSize = n
	}
	if f.o.Fault == "" {
		errs = append(errs, agerr.BadInputf("--fault is required: one of %s", strings.Join(drill.Faults, ", ")))
	} else if err := f.o.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cluster.CheckName(f.cluster); err != nil {
		errs = append(errs, err)
	}
	if err := agerr.Join(errs...); err != nil {
		return err
	}
	if validating(cmd.Context()) {
		return nil
	}
	if ends != nil {
		return runObserve(cmd, a, f, ends)
	}
	topo, unlock, err := loadClusterLocked(a, f.cluster)
	if err != nil {
		return err
	}
	defer unlock()
	if f.o.Fault != drill.FaultObserve {
		if err := drill.Check(topo, f.o); err != nil {
			return err
		}
	}
	if err := drill.CheckWorkload(cmd.Context(), topo, f.o); err != nil {
		return err
	}
	d := &experiment.Drill{Version: version, Args: cmdArgs(cmd), Results: f.results, Topo: topo, Options: f.o,
		Config: map[string]any{"fault": f.o.Fault, "workload": f.o.Workload, "cycles": f.o.Cycles, "vus": f.o.Writers, "read_vus": f.o.Readers,
			"between": f.o.Between.String(), "commit_wait": f.o.CommitWait.String(), "detect_timeout": f.o.DetectTimeout.String(), "keep": f.o.Keep, "commit": topo.Commit}}
	if f.o.Fault == drill.FaultWALFull {
		d.Config["wal_fs_size"] = f.o.WALFSSize
	}
	if topo.Patroni != nil {
		d.Config["ha"] = cluster.HAPatroni
		d.Config["kill"] = f.o.Kill
	}
	return runDrillExperiment(cmd, a, d)
}

// runDrillExperiment runs the drill with a progress line per event on stderr, then prints
// the table, the verdict and where the result is.
func runDrillExperiment(cmd *cobra.Command, a *app, d *experiment.Drill) error {
	start := time.Now()
	out, runErr := d.Run(cmd.Context(), func(format string, args ...any) {
		fmt.Fprintf(a.stderr, "%7.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	})
	if out == nil {
		return runErr
	}
	printDrill(a.stdout, out.Result, out.Run)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", out.Path)
	}
	return runErr
}

// printDrill writes the table of cycles, the verdict and the cluster's state at the end.
func printDrill(w io.Writer, r *result.Result, run *result.DrillRun) {
	fmt.Fprintln(w)
	tw := table.NewWriter(w, table.Right)
	tw.Row("cycle", "fault", "from", "to", "acked", "lost", "in doubt", "committed", "failover s", "detected s", "fenced s", "old acked", "writes back s", "writes blocked s", "no sync standby s", "reads back s", "reroute write s", "reroute read s", "WAL lacked", "errors/s by SQLSTATE", "after")
	for i := range r.Steps {
		st := &r.Steps[i]
		dc, err := st.DrillCycle()
		if err != nil || dc == nil {
			tw.Row(fmt.Sprint(i+1), "no figures: "+fmt.Sprint(err))
			continue
		}
		lost, committed := table.Absent, table.Absent
		if dc.Checked {
			lost, committed = fmt.Sprint(dc.Lost), fmt.Sprint(dc.InDoubtPresent)
		}
		tw.Row(fmt.Sprint(dc.Cycle), dc.Fault, dc.From, orAbsent(dc.To), fmt.Sprint(dc.Acked), lost, fmt.Sprint(dc.InDoubt), committed,
			seconds(dc.FailoverSeconds), seconds(dc.DetectSeconds), seconds(dc.FenceSeconds), oldAcked(dc), writesBack(dc), seconds(dc.WritesBlockedSeconds), orAbsent(dc.SyncGap.NoSyncCell()), seconds(dc.ReadBackSeconds),
			seconds(dc.RerouteWriteSeconds), seconds(dc.RerouteReadSeconds), walBytes(dc), errorRates(st), afterFault(dc))
	}
	tw.Flush()
	for i := range r.Steps {
		dc, _ := r.Steps[i].DrillCycle()
		if dc == nil {
			continue
		}
		if len(dc.LostIDs) > 0 {
			fmt.Fprintf(w, "cycle %d: lost acknowledged commits (ids, first %d): %v\n", dc.Cycle, len(dc.LostIDs), dc.LostIDs)
		}
		if dc.TPCC != nil {
			printDrillTPCC(w, dc)
		}
		if dc.SyncWait != "" {
			fmt.Fprintf(w, "cycle %d: * writes back: %s\n", dc.Cycle, dc.SyncWait)
		}
		if line := dc.SyncGap.Sentence(); line != "" {
			fmt.Fprintf(w, "cycle %d: %s\n", dc.Cycle, line)
		}
		for _, p := range dc.Problems {
			fmt.Fprintf(w, "cycle %d: %s\n", dc.Cycle, p)
		}
	}
	if run == nil {
		return
	}
	printDrillPatroni(w, r, run)
	fmt.Fprintf(w, "\n%s\n", run.Verdict)
	for _, f := range run.Failed {
		fmt.Fprintf(w, "failed: %s\n", f)
	}
	fmt.Fprintf(w, "cluster at the end: %s\n", run.Left)
}

// printDrillTPCC writes a tpcc cycle's lost New-Orders and its consistency checks.
func printDrillTPCC(w io.Writer, dc *result.DrillCycle) {
	t := dc.TPCC
	if len(t.LostOrders) > 0 {
		fmt.Fprintf(w, "cycle %d: lost acknowledged New-Orders (warehouse/district/order, first %d): %s\n", dc.Cycle, len(t.LostOrders), strings.Join(t.LostOrders, " "))
	}
	if len(t.Checks) == 0 {
		return // why is among the cycle's problems
	}
	held := 0
	for _, c := range t.Checks {
		if c.Violations == 0 {
			held++
		}
	}
	fmt.Fprintf(w, "cycle %d: %s read-write transactions acknowledged; TPC-C consistency conditions: %d of %d hold\n",
		dc.Cycle, units.GroupInt(t.Transactions), held, len(t.Checks))
}

// walBytes is the WAL the new primary lacked, "0" after a planned failover (none by
// construction) and absent when it was not measured.
func walBytes(dc *result.DrillCycle) string {
	switch {
	case dc.WALBytesLacked != nil:
		return units.FormatBytesShort(*dc.WALBytesLacked)
	case dc.Fault == drill.FaultPlanned && dc.To != "":
		return "0"
	}
	return table.Absent
}

// afterFault is the state the fault left: the old primary's after a failover, the hit node's
// after a fault healed in place ("standby1 streaming").
func afterFault(dc *result.DrillCycle) string {
	if dc.To == "" && dc.Target != "" {
		return dc.Target + " " + orAbsent(dc.Healed)
	}
	if dc.To == "" && dc.Healed != "" {
		return dc.From + " " + dc.Healed
	}
	return orAbsent(dc.OldPrimary)
}

// oldAcked is the writes the old primary acknowledged after the fault ("12, 3 after the
// promotion" when it went on after it); absent when the cycle did not fail over.
func oldAcked(dc *result.DrillCycle) string {
	switch {
	case dc.To == "":
		return table.Absent
	case dc.OldAckedAfterPromotion > 0:
		return fmt.Sprintf("%d, %d after the promotion", dc.OldAcked, dc.OldAckedAfterPromotion)
	}
	return fmt.Sprint(dc.OldAcked)
}

// writesBack is the time until writes were back, marked "*" when the new primary's commits
// waited for the old primary to rejoin (said under the table).
func writesBack(dc *result.DrillCycle) string {
	if dc.SyncWait != "" && dc.WriteBackSeconds != nil {
		return seconds(dc.WriteBackSeconds) + "*"
	}
	return seconds(dc.WriteBackSeconds)
}

func orAbsent(s string) string {
	if s == "" {
		return table.Absent
	}
	return s
}

func seconds(v *float64) string {
	if v == nil {
		return table.Absent
	}
	return fmt.Sprintf("%.2f", *v)
}

// errorRates writes a step's errors per second of its window by SQLSTATE ("57P01 3.1, 08006 0.4");
// with no window to divide by, the rate is absent.
func errorRates(st *result.Step) string {
	if len(st.Errors) == 0 {
		return "0"
	}
	secs := st.Window.Seconds()
	if !(secs > 0) {
		return table.Absent
	}
	var parts []string
	for _, e := range st.Errors {
		parts = append(parts, fmt.Sprintf("%s %.1f", e.SQLState, float64(e.Count)/secs))
	}
	return strings.Join(parts, ", ")
}
