package drill

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
)

// injectFreeze freezes the primary (SIGSTOP of its postmaster and every child: alive, its
// sockets open, silent) and fails over as a DBA would whose check of the primary timed out:
// agbench's failover probes the primary, takes it for failed after o.DetectTimeout without
// an answer (the detection), fences it (SIGKILL of every frozen process, so that none runs
// again to acknowledge a commit), promotes the standby that received the most WAL, and
// rewinds the old primary into a standby. Interrupted before the failover begins, the
// primary is resumed instead (SIGCONT) and stays primary; a failover that fails to fence it
// resumes it too, so that no process is left stopped.
func injectFreeze(ctx context.Context, t *cluster.Topology, o Options, c *Cycle, dc *result.DrillCycle, p Progress) (*cluster.FailoverReport, error) {
	hctx := context.WithoutCancel(ctx)
	dc.FaultAt = time.Now()
	c.tally.fault(dc.FaultAt)
	f, err := t.FreezeNode(hctx, dc.From)
	if err != nil {
		return nil, fmt.Errorf("freeze %s: %w", dc.From, err)
	}
	p("cycle %d: froze %s (SIGSTOP of its postmaster and %d children, in %.1f ms)", c.N, dc.From, len(f.Pids())-1, float64(f.Took.Microseconds())/1000)
	thaw := func(why string) error {
		if err := f.Thaw(); err != nil {
			return fmt.Errorf("%s, and resuming %s failed: %w (resume it with kill -CONT %s)", why, dc.From, err, joinInts(f.Pids()))
		}
		p("cycle %d: %s: resumed %s (SIGCONT)", c.N, why, dc.From)
		return nil
	}
	if o.Hooks != nil && o.Hooks.BeforeFailover != nil {
		if err := o.Hooks.BeforeFailover(hctx, c); err != nil {
			return nil, errors.Join(err, thaw("hook failed"))
		}
	}
	if ctx.Err() != nil {
		return nil, errors.Join(ctx.Err(), thaw("interrupted before the failover"))
	}
	rep, err := failover(hctx, t, o, c, cluster.FailoverOptions{ProbeTimeout: o.DetectTimeout})
	if rep != nil && !rep.Detected.IsZero() {
		dc.DetectSeconds = since(dc.FaultAt, rep.Detected)
	}
	if err != nil || rep == nil || rep.FencedAt.IsZero() {
		why := "the failover did not fence it"
		if err != nil {
			why = "the failover failed"
		}
		if terr := thaw(why); terr != nil {
			err = errors.Join(err, terr)
		} else if err == nil {
			dc.Problems = append(dc.Problems, fmt.Sprintf("%s was frozen and %s: resumed", dc.From, why))
		}
	}
	return rep, err
}
