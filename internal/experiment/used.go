package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/target"
)

// usesStandbys says whether the run's sessions may go to a standby: read intent (the VUs'
// own or other sessions'), a routing comparison, or the stale-read probe, which reads on
// them. A run whose sessions all go to the primary does not use them.
func (l *Load) usesStandbys() bool {
	return l.Routing() || l.Intent == target.ReadOnly || l.ReadSessions || l.StaleProbe != ""
}

// checkTarget checks the servers the run uses (target.Check): every one, or the primary
// alone for a run that uses no standby. A standby such a run does not use is checked too:
// one that is not what its flag says (bad input) refuses the run all the same, but one that
// cannot be reached (down) is no reason to: it is noted, and left out of the samplers and
// the buffer counters.
func (l *Load) checkTarget(ctx context.Context) error {
	if l.usesStandbys() || len(l.Target.Standbys) == 0 {
		return l.Target.Check(ctx)
	}
	primary := *l.Target
	primary.Standbys, primary.StandbyNames = nil, nil
	if err := primary.Check(ctx); err != nil {
		return err
	}
	for i, cs := range l.Target.Standbys {
		one := *l.Target
		one.Primary, one.Standbys, one.StandbyNames, one.Listener = "", []string{cs}, []string{l.Target.NameOfStandby(i)}, ""
		err := one.Check(ctx)
		if agerr.IsBadInput(err) {
			return err
		}
		if err != nil {
			name := l.Target.NameOfStandby(i)
			if l.down == nil {
				l.down = map[string]bool{}
			}
			l.down[name] = true
			l.notes = append(l.notes, fmt.Sprintf("%s is not used by this run (its sessions all go to the primary) and could not be reached: %v; it is left out of the samplers", name, err))
		}
	}
	return nil
}

// sampled is the target whose servers the samplers watch: the target without the standbys
// found down (checkTarget).
func (l *Load) sampled() *target.Target {
	if len(l.down) == 0 {
		return l.Target
	}
	t := *l.Target
	t.Standbys, t.StandbyNames = nil, nil
	for i, cs := range l.Target.Standbys {
		if name := l.Target.NameOfStandby(i); !l.down[name] {
			t.Standbys = append(t.Standbys, cs)
			t.StandbyNames = append(t.StandbyNames, name)
		}
	}
	if l.Target.Topo != nil {
		topo := *l.Target.Topo
		topo.Nodes = slices.DeleteFunc(slices.Clone(topo.Nodes), func(n cluster.Node) bool { return l.down[n.Name] })
		t.Topo = &topo
	}
	return &t
}
