package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
)

// Drop removes a standby that seeding added (stops it, drops its slot, removes its data
// folder and takes it out of the topology) and marks its latest completed seeding in the
// history as removed. It takes the cluster's lock.
func Drop(ctx context.Context, topo *cluster.Topology, name string) error {
	n := topo.Node(name)
	if n == nil {
		return agerr.BadInputf("--name %s: cluster %s has no node of that name (nodes: %v)", name, topo.Name, topo.NodeNames())
	}
	if n.Role != cluster.RoleStandby {
		return agerr.BadInputf("--name %s: it is the primary", name)
	}
	unlock, err := topo.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := topo.RemoveStandby(ctx, *n); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	recs, err := History(topo.Dir)
	if err != nil {
		return err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Standby == name && recs[i].State == StateCompleted {
			r := recs[i]
			r.State, r.Removed = StateRemoved, time.Now().UTC()
			return putRecord(topo.Dir, &r)
		}
	}
	return nil
}
