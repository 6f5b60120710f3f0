package experiment

import (
	"context"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/target"
)

// describeCluster fills the result's topology and server from a local cluster's primary
// (the server's version and settings; a warning when they cannot be read).
func (r *Recorder) describeCluster(ctx context.Context, topo *cluster.Topology) {
	res := r.Result
	res.Meta.Topology = (&target.Target{Topo: topo}).Summary()
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		r.Warn("server version and settings not read: " + err.Error())
		return
	}
	defer c.Close(context.WithoutCancel(ctx))
	if res.Meta.Server, err = target.ServerInfo(ctx, c); err != nil {
		r.Warn("server version and settings not read: " + err.Error())
	}
}
