package experiment

import (
	"context"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/drill"
	"github.com/agbench/agbench/internal/result"
)

// Drill is a failover drill on a local cluster: internal/drill's cycles, each recorded as a
// step as it ends, the drill's sum in the run's Extra.
//
// It keeps its own loop rather than the runner's: a cycle is load, a fault, a failover and
// checks of what the cluster kept, not virtual users in a measured window of a sweep.
type Drill struct {
	Version string
	Args    []string
	Results string
	Topo    *cluster.Topology
	// Endpoints are the servers of an observe drill on a cluster agbench did not make
	// (nil: Topo's nodes).
	Endpoints *drill.Endpoints
	Options   drill.Options
	Config    map[string]any
}

// DrillOutcome is what a drill produced.
type DrillOutcome struct {
	Result *result.Result
	Run    *result.DrillRun
	Path   string
}

// Run runs the drill and writes its result; progress gets one line per event (or nil).
func (d *Drill) Run(ctx context.Context, progress drill.Progress) (*DrillOutcome, error) {
	rec, err := NewRecorder(d.Results, "drill", d.Version, d.Args)
	if err != nil {
		return nil, err
	}
	res := rec.Result
	res.Meta.Config = d.Config
	if d.Topo != nil {
		rec.describeCluster(ctx, d.Topo)
	}
	var run *result.DrillRun
	var runErr error
	if d.Options.Fault == drill.FaultObserve {
		e := d.Endpoints
		if e == nil {
			e = drill.EndpointsOf(d.Topo)
		}
		run, runErr = drill.RunObserve(ctx, e, d.Options, res, rec, progress)
	} else {
		run, runErr = drill.Run(ctx, d.Topo, d.Options, res, rec, progress)
	}
	rec.End(runErr)
	out := &DrillOutcome{Result: res, Run: run}
	out.Path, err = rec.Finish()
	return out, err
}
