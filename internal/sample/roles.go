package sample

import (
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// roleChange is a node seen changing role between two readings: promoted (in recovery, then
// writable) or made a standby (writable, then in recovery).
type roleChange struct {
	before, after time.Time
	promoted      bool
}

// roleWarnings warns of every node that changed role in the window: a standby promoted (a
// failover, or a second primary beside the first) or a primary turned standby. Sessions that
// landed on it as one role ran on the other after, and its figures of the window span both:
// the step is not the steady state its figures seem to say.
func (p *PG) roleWarnings(st *result.Step) {
	for _, n := range p.nodes {
		for _, c := range n.roleChanges {
			from, to := c.before.Sub(p.started).Seconds(), c.after.Sub(p.started).Seconds()
			what := fmt.Sprintf("%s was promoted during the window (a standby at %.1f s, writable at %.1f s)", n.info.Name, from, to)
			if !c.promoted {
				what = fmt.Sprintf("%s became a standby during the window (writable at %.1f s, in recovery at %.1f s)", n.info.Name, from, to)
			}
			st.Warnings = append(st.Warnings, what+": sessions that landed on it ran in the other role after, and its figures span both roles")
		}
	}
}
