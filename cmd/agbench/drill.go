package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/units"
)

func init() { registerKind("drill", newDrillCmd) }

// drillFlags are the flags of `agbench drill` as given.
type drillFlags struct {
	cluster, results, walFSSize string
	// --primary, --standby, --listener, --patroni: a cluster agbench did not make, for
	// --fault observe only (faults go only to agbench's clusters).
	primary, listener, patroni string
	standbys                   []string
	o                          drill.Options
	ends                       *drill.Endpoints // what check made of them
}

func newDrillCmd(a *app) *cobra.Command {
	f := &drillFlags{}
	c := &cobra.Command{
		Use: "drill",
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
		PreRunE: func(*cobra.Command, []string) error { return f.check() },
		RunE:    func(cmd *cobra.Command, args []string) error { return runDrill(cmd, a, f) },
	}
	f.register(c.Flags())
	return c
}

// register adds the drill's flags.
func (f *drillFlags) register(fl *pflag.FlagSet) {
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
}

// check validates the command line without reading a cluster or connecting (cobra's
// PreRunE, and a plan's check), and keeps the endpoints of a cluster given by
// connection strings.
func (f *drillFlags) check() error {
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
			if patroni, err = listener.ParsePatroniURLs(f.patroni); err != nil {
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
	f.ends = ends
	return agerr.Join(errs...)
}

func runDrill(cmd *cobra.Command, a *app, f *drillFlags) error {
	if ends := f.ends; ends != nil {
		// a cluster given by connection strings: no cluster of agbench's is loaded or
		// locked, and nothing but SQL (and Patroni's REST API) reaches the servers
		return runDrillExperiment(cmd, a, f, &experiment.Drill{Endpoints: ends, Options: f.o})
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
	return runDrillExperiment(cmd, a, f, &experiment.Drill{Topo: topo, Options: f.o})
}

// runDrillExperiment runs the drill with a progress line per event on stderr, then prints
// the table, the verdict and where the result is.
func runDrillExperiment(cmd *cobra.Command, a *app, f *drillFlags, d *experiment.Drill) error {
	start := time.Now()
	out, runErr := experiment.Run(cmd.Context(), d, setup(cmd, f.results, func(e experiment.Event) {
		if e, ok := e.(experiment.DrillEvent); ok {
			fmt.Fprintf(a.stderr, "%7.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(e.Format, e.Args...))
		}
	}))
	if out == nil {
		return runErr
	}
	render.Drill(a.stdout, out.Result, d.Summary)
	if out.Path != "" {
		fmt.Fprintf(a.stdout, "\nresult: %s\n", out.Path)
	}
	return runErr
}
