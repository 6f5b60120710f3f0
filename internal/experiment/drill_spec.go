package experiment

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/units"
)

func init() {
	Register(Meta{Name: "drill", Description: "Failover drill: acknowledged commits lost and time without writes, per failover",
		Use: "drill", Long: drillLong,
		Flags: func(fs *pflag.FlagSet) Builder {
			s := &DrillSettings{}
			s.register(fs)
			return func(args []string) (Experiment, error) {
				if len(args) > 0 {
					return nil, agerr.BadInputf("agbench drill: unexpected argument %q (it takes flags only)", args[0])
				}
				return s, nil
			}
		}})
}

const drillLong = `Measure what a failover costs on a local cluster that agbench made. Each cycle:
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
primary not back, the old primary acknowledging writes after the promotion).`

// DrillSettings is a drill's spec as its flags give it: a cluster agbench made (--cluster),
// or for --fault observe one given by connection strings, and the drill's options. Run
// makes the Drill and runs it; Ran is that drill (its Summary) once it has run.
type DrillSettings struct {
	Cluster, Results, WALFSSize string
	// Primary, Standbys, Listener and Patroni are a cluster agbench did not make, for
	// --fault observe only (faults go only to agbench's clusters).
	Primary, Listener, Patroni string
	Standbys                   []string
	Options                    drill.Options
	// Hosts say where the nodes' host figures come from, read beside every cycle.
	Hosts HostMetricsFlags

	ran *Drill
}

func (s *DrillSettings) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.Cluster, "cluster", "lab", "cluster made by agbench cluster create")
	fl.StringVar(&s.Options.Fault, "fault", "", "the fault: "+strings.Join(drill.Faults, ", ")+", or observe (a failover by other means)")
	fl.IntVar(&s.Options.Cycles, "cycles", 20, "failovers to run")
	fl.StringVar(&s.Options.Workload, "workload", drill.WorkloadLedger, "the load: "+strings.Join(drill.Workloads, " or ")+" (TPC-C terminals on a schema made by agbench tpcc build)")
	fl.IntVar(&s.Options.Writers, "vus", drill.DefaultWriters, "writers (each commits ledger rows as fast as it can), or TPC-C terminals with --workload tpcc")
	fl.IntVar(&s.Options.Readers, "read-vus", drill.DefaultReaders, "readers (read intent: a standby when there is one)")
	fl.DurationVar(&s.Options.Between, "between", drill.DefaultBetween, "load before each fault, and again after each failover")
	fl.DurationVar(&s.Options.CommitWait, "commit-wait", drill.DefaultCommitWait, "how long an operation waits for its answer; an unanswered commit is in doubt")
	fl.DurationVar(&s.Options.DetectTimeout, "detect-timeout", drill.DefaultDetectTimeout, "freeze-primary, partition-primary: how long the primary may stay silent before it is taken for failed and fenced")
	fl.StringVar(&s.Options.Kill, "kill", "", "under Patroni, what kill-primary kills: "+strings.Join(drill.Kills, ", ")+" (default both, as a crash of the machine)")
	fl.BoolVar(&s.Options.Keep, "keep", false, "keep the ledger table ("+drill.LedgerTable+") at the end")
	fl.StringVar(&s.WALFSSize, "wal-fs-size", "128M", "wal-full: size of the file system made for the primary's pg_wal")
	fl.StringVar(&s.Results, "results", "results", "folder for results/<time>-drill/result.json")
	fl.StringVar(&s.Primary, "primary", "", "with --fault observe: the primary's connection string, [NAME=]URL, of a cluster agbench did not make")
	fl.StringArrayVar(&s.Standbys, "standby", nil, "with --fault observe: a standby's connection string, [NAME=]URL (repeatable)")
	fl.StringVar(&s.Listener, "listener", "", "with --fault observe: the writers connect here (a connection string)")
	fl.StringVar(&s.Patroni, "patroni", "", "with --fault observe: Patroni REST API URLs, comma-separated, in the order of --primary and --standby; the drill asks Patroni for a switchover each cycle")
	fl.DurationVar(&s.Options.ObserveWait, "observe-wait", drill.DefaultObserveWait, "with --fault observe and no --patroni: how long each cycle waits for your failover")
	s.Hosts.Register(fl)
}

// Kind is drill.
func (s *DrillSettings) Kind() string { return "drill" }

// Sections are the drill's.
func (s *DrillSettings) Sections() []string { return (&Drill{}).Sections() }

// Ran is the drill that ran (nil before Run has made it).
func (s *DrillSettings) Ran() *Drill { return s.ran }

// Validate checks the flags without reading a cluster or connecting.
func (s *DrillSettings) Validate() error {
	_, _, err := s.parse()
	return err
}

// parse reads the flags: the options (with --wal-fs-size) and the endpoints of a cluster
// given by connection strings (nil for --cluster).
func (s *DrillSettings) parse() (drill.Options, *drill.Endpoints, error) {
	var errs []error
	o := s.Options
	urls := s.Primary != "" || len(s.Standbys) > 0 || s.Listener != ""
	if urls && o.Fault != drill.FaultObserve {
		errs = append(errs, agerr.BadInputf("--primary/--standby/--listener: a drill injects faults only into servers agbench started; use --cluster NAME (a cluster made by agbench cluster create), or --fault observe to fail such a cluster over by your own means"))
	}
	var ends *drill.Endpoints
	if urls && o.Fault == drill.FaultObserve {
		var patroni []string
		if s.Patroni != "" {
			var err error
			if patroni, err = listener.ParsePatroniURLs(s.Patroni); err != nil {
				errs = append(errs, err)
			}
		}
		var err error
		ends, err = drill.NewEndpoints(s.Primary, s.Standbys, s.Listener, patroni)
		errs = append(errs, err)
	} else if s.Patroni != "" {
		errs = append(errs, agerr.BadInputf("--patroni: only with --fault observe and --primary/--standby (a --cluster under Patroni gives its REST APIs itself)"))
	}
	if n, err := units.ParseBytes(s.WALFSSize); err != nil {
		errs = append(errs, agerr.BadInputf("--wal-fs-size %q: want a size such as 128M", s.WALFSSize))
	} else {
		o.WALFSSize = n
	}
	if o.Fault == "" {
		errs = append(errs, agerr.BadInputf("--fault is required: one of %s", strings.Join(drill.Faults, ", ")))
	} else if err := o.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cluster.CheckName(s.Cluster); err != nil {
		errs = append(errs, err)
	}
	if _, err := s.Hosts.Parse(); err != nil {
		errs = append(errs, err)
	}
	return o, ends, agerr.Join(errs...)
}

// Run runs the drill: on the cluster given by connection strings (nothing of agbench's
// loaded or locked, nothing but SQL and Patroni's REST API reaching the servers), or on
// the agbench cluster, locked for the drill, once its fault and workload are checked.
func (s *DrillSettings) Run(ctx context.Context, r *Running) error {
	o, ends, err := s.parse()
	if err != nil {
		return err
	}
	if ends != nil {
		var names []string
		for _, n := range ends.Nodes {
			names = append(names, n.Name)
		}
		if o.Samplers, err = s.hostSamplers(ctx, names, nil); err != nil {
			return err
		}
		s.ran = &Drill{Endpoints: ends, Options: o}
		return s.ran.Run(ctx, r)
	}
	topo, unlock, err := cluster.OpenLocked(context.Background(), r.Home(), s.Cluster)
	if err != nil {
		return err
	}
	defer unlock()
	if o.Fault != drill.FaultObserve {
		if err := drill.Check(topo, o); err != nil {
			return err
		}
	}
	if err := drill.CheckWorkload(ctx, topo, o); err != nil {
		return err
	}
	var names []string
	for _, n := range topo.Nodes {
		names = append(names, n.Name)
	}
	if o.Samplers, err = s.hostSamplers(ctx, names, topo); err != nil {
		return err
	}
	s.ran = &Drill{Topo: topo, Options: o}
	return s.ran.Run(ctx, r)
}

// hostSamplers reads the nodes' hosts beside every cycle: those the flags name, and a
// cluster's (topo) that its topology gives an exporter. Bad input when a node is not the
// drill's or a source gives no figures.
func (s *DrillSettings) hostSamplers(ctx context.Context, nodes []string, topo *cluster.Topology) ([]drill.Sampler, error) {
	h, err := s.Hosts.Parse()
	if err != nil {
		return nil, err
	}
	if h, err = h.Resolve(nodes, topo); err != nil {
		return nil, err
	}
	remote, err := h.Sources(ctx)
	if err != nil || len(remote) == 0 {
		return nil, err
	}
	hs, err := sample.NewRemoteHostStep(remote, 0)
	if err != nil {
		return nil, err
	}
	return []drill.Sampler{hs}, nil
}
