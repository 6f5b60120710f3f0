package experiment

import (
	"context"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/result"
)

// Drill is a failover drill on a local cluster: internal/drill's cycles, each recorded as a
// step as it ends, the drill's sum in the run's Extra.
//
// It keeps its own loop rather than the runner's: a cycle is load, a fault, a failover and
// checks of what the cluster kept, not virtual users in a measured window of a sweep.
type Drill struct {
	Topo *cluster.Topology
	// Endpoints are the servers of an observe drill on a cluster agbench did not make
	// (nil: Topo's nodes).
	Endpoints *drill.Endpoints
	Options   drill.Options

	// Summary is the drill's sum once it has run (nil when it did not get that far).
	Summary *result.DrillRun
}

// DrillEvent is one line of a drill's progress (drill.Progress's).
type DrillEvent struct {
	Format string
	Args   []any
}

// Kind is "drill".
func (d *Drill) Kind() string { return "drill" }

// Validate checks the drill's options and that it has a cluster or endpoints to act on.
func (d *Drill) Validate() error {
	if d.Topo == nil && d.Endpoints == nil {
		return agerr.BadInputf("drill: no cluster and no endpoints")
	}
	return d.Options.Validate()
}

// Sections is the drill's section, of the run and of every cycle.
func (d *Drill) Sections() []string { return []string{result.ExtraDrill} }

// Run runs the drill, each cycle recorded as a step as it ends. An observe drill on a
// cluster agbench did not make first checks that its login may make the ledger.
func (d *Drill) Run(ctx context.Context, r *Running) error {
	if e := d.Endpoints; e != nil {
		// a cluster given by connection strings: its targets checked before the folder
		if err := e.Check(ctx); err != nil {
			return err
		}
		if len(e.Nodes) == 0 {
			return agerr.BadInputf("drill: no endpoints")
		}
		if err := privilege.CheckServer(ctx, "--primary", e.Nodes[0].Conn, "drill --fault observe", drillNeeds()); err != nil {
			return err
		}
	}
	rec, err := r.Recorder()
	if err != nil {
		return err
	}
	res := rec.Result
	res.Meta.Config = d.config()
	if d.Topo != nil {
		rec.describeCluster(ctx, d.Topo)
	}
	progress := func(format string, args ...any) { r.Emit(DrillEvent{Format: format, Args: args}) }
	var runErr error
	if d.Options.Fault == drill.FaultObserve {
		e := d.Endpoints
		if e == nil {
			e = drill.EndpointsOf(d.Topo)
		}
		d.Summary, runErr = drill.RunObserve(ctx, e, d.Options, res, rec, progress)
	} else {
		d.Summary, runErr = drill.Run(ctx, d.Topo, d.Options, res, rec, progress)
	}
	return runErr
}
