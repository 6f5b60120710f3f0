package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/proc"
)

// DefaultProbeTimeout is how long a failover waits for a running primary to answer before it
// takes it for silent (frozen, hung) and fences it: long, so that a primary that is only
// busy is handed over cleanly.
const DefaultProbeTimeout = 10 * time.Second

// Frozen is a node whose processes agbench stopped with SIGSTOP: alive, holding their
// sockets, and silent.
type Frozen struct {
	Node string
	// Took is from the postmaster's stop until the last child's.
	Took  time.Duration
	procs []process
}

// FreezeNode stops the named node's postmaster and then each of its children with SIGSTOP
// (the postmaster first, so that it forks no new one), after OwnPostmaster's checks, and
// waits until every one of them is stopped. The node is then up but silent: connections are
// accepted by the kernel and never answered. Thaw undoes it; a failover fences it.
func (t *Topology) FreezeNode(ctx context.Context, name string) (*Frozen, error) {
	pid, err := t.OwnPostmaster(name)
	if err != nil {
		return nil, err
	}
	pm, err := proc.ReadStat(proc.Root, pid)
	if err != nil {
		return nil, fmt.Errorf("node %s: postmaster %d is gone", name, pid)
	}
	f := &Frozen{Node: name, procs: []process{{pid, pm.StartTime}}}
	// The children are listed before the postmaster stops, and stopped right after it (reading
	// /proc takes a while on a busy machine, and the backends commit meanwhile); a second list
	// finds any forked in between.
	kids := children(pid)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("stop postmaster %d of %s: %w", pid, name, err)
	}
	began := time.Now()
	stopped := map[int]bool{}
	stop := func(ks []int) error {
		for _, k := range ks {
			if stopped[k] {
				continue
			}
			stopped[k] = true
			st, err := proc.ReadStat(proc.Root, k)
			if err != nil || st.PPID != pid { // gone, or its pid reused since the first list
				continue
			}
			if err := syscall.Kill(k, syscall.SIGSTOP); err != nil {
				if errors.Is(err, syscall.ESRCH) {
					continue
				}
				return fmt.Errorf("stop process %d of %s: %w", k, name, err)
			}
			f.procs = append(f.procs, process{k, st.StartTime})
		}
		return nil
	}
	if err := stop(kids); err != nil {
		return f, errors.Join(err, f.Thaw())
	}
	if err := stop(children(pid)); err != nil {
		return f, errors.Join(err, f.Thaw())
	}
	f.Took = time.Since(began)
	deadline := time.Now().Add(crashWait)
	for {
		running := 0
		for _, p := range f.procs {
			if st, err := proc.ReadStat(proc.Root, p.pid); err == nil && st.StartTime == p.start && !strings.ContainsRune("TtZX", rune(st.State)) {
				running++
			}
		}
		if running == 0 {
			return f, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return f, errors.Join(fmt.Errorf("%s: %d processes not stopped after %v", name, running, crashWait), f.Thaw())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Pids lists the frozen processes, the postmaster first.
func (f *Frozen) Pids() []int {
	var out []int
	for _, p := range f.procs {
		out = append(out, p.pid)
	}
	return out
}

// Thaw resumes every frozen process that still runs (SIGCONT); a process that is gone (a
// fenced node's) or whose pid now names another is left alone.
func (f *Frozen) Thaw() error {
	var errs []error
	for _, p := range f.procs {
		if !p.same() {
			continue
		}
		if err := syscall.Kill(p.pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("resume process %d of %s: %w", p.pid, f.Node, err))
		}
	}
	return errors.Join(errs...)
}

// StoppedProcesses lists the named node's postmaster and children that are stopped (state T:
// SIGSTOP, a frozen node), nil when none is or the node does not run.
func (t *Topology) StoppedProcesses(name string) []int {
	n := t.Node(name)
	if n == nil {
		return nil
	}
	pid := postmasterPID(n.DataDir)
	if pid == 0 {
		return nil
	}
	var out []int
	for _, p := range append([]int{pid}, children(pid)...) {
		if st, err := proc.ReadStat(proc.Root, p); err == nil && st.State == 'T' {
			out = append(out, p)
		}
	}
	return out
}

// FenceNode makes sure the named node never answers again until agbench starts it, after
// OwnPostmaster's checks: its postmaster and every child are stopped (SIGSTOP: no process
// forks or answers any more; a frozen node's already are), then killed (SIGKILL: a stopped
// process dies without running again, so it cannot acknowledge a commit). It waits until
// every process is gone and removes the lock file of a postmaster left a zombie.
func (t *Topology) FenceNode(ctx context.Context, name string) error {
	f, err := t.FreezeNode(ctx, name)
	if err != nil {
		return fmt.Errorf("fence %s: %w", name, err)
	}
	for _, p := range f.procs {
		if !p.same() {
			continue
		}
		if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("fence %s: kill process %d: %w", name, p.pid, err)
		}
	}
	return t.waitDead(ctx, name, f.Pids())
}

// waitDead waits until the processes pids (the node's postmaster first) have exited, then
// clears the postmaster's lock file if it is a zombie.
func (t *Topology) waitDead(ctx context.Context, name string, pids []int) error {
	deadline := time.Now().Add(crashWait)
	for {
		left := 0
		for _, k := range pids {
			if Alive(k) {
				left++
			}
		}
		if left == 0 {
			return clearZombieLock(t.Node(name).DataDir, pids[0])
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d processes of postmaster %d still alive after %v", name, left, pids[0], crashWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// probe asks node n for an answer within timeout: a connection and SELECT 1. It reports
// whether the node stayed silent until the timeout (nil error otherwise: any answer, even
// an error, is an answer).
func (t *Topology) probe(ctx context.Context, n *Node, timeout time.Duration) bool {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg, err := pgx.ParseConfig(t.directConnString(n, ""))
	if err != nil {
		return false
	}
	cfg.ConnectTimeout = timeout
	c, err := pgx.ConnectConfig(pctx, cfg)
	if err == nil {
		_, err = c.Exec(pctx, "SELECT 1")
		c.Close(context.WithoutCancel(ctx))
	}
	if err == nil {
		return false
	}
	var ne net.Error
	return pctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// joinPids joins pids for a message ("123 456").
func joinPids(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, " ")
}

// fenceFailed fences the old primary before an unplanned failover when it runs but must not
// go on: o.Fence says so, or it stayed silent for the probe's timeout. It reports whether it
// fenced it.
func (t *Topology) fenceFailed(ctx context.Context, old *Node, o FailoverOptions, r *FailoverReport, clock *stepClock) (bool, error) {
	if !t.nodeRunning(old) {
		return false, nil
	}
	if !o.Fence {
		timeout := o.ProbeTimeout
		if timeout <= 0 {
			timeout = DefaultProbeTimeout
		}
		if !t.probe(ctx, old, timeout) {
			return false, nil
		}
		r.Silent, r.Detected = true, time.Now()
		clock.done(fmt.Sprintf("%s silent for %v", old.Name, timeout))
	}
	if err := t.FenceNode(ctx, old.Name); err != nil {
		return false, err
	}
	r.FencedAt = time.Now()
	clock.done("fence " + old.Name + " (SIGKILL)")
	return true, nil
}

// walLacked measures, after an unplanned failover and before the old primary is rewound,
// the WAL the new primary lacked of it (WALLacked), from what the new one had received
// (which its functions keep after promotion).
func (t *Topology) walLacked(ctx context.Context, old, target *Node, r *FailoverReport) {
	lsn, err := t.receivedLSN(ctx, target)
	if err != nil {
		r.WALLackedNote = "not measured: " + target.Name + "'s received WAL position: " + err.Error()
		return
	}
	r.WALLacked, r.WALLackedNote = t.WALLacked(ctx, old.Name, lsn)
}

// WALLacked is the WAL of the stopped node old that a node which had received up to received
// (a WAL position) lacked: old's end of valid WAL (pg_waldump on its pg_wal) minus received,
// 0 when it had all of it. Unmeasured, it is absent (nil) with the reason ("not measured: …").
func (t *Topology) WALLacked(ctx context.Context, old, received string) (*int64, string) {
	had, err := ParseLSN(received)
	if err != nil {
		return nil, "not measured: " + err.Error()
	}
	end, err := t.EndOfWAL(ctx, old, received)
	if err != nil {
		return nil, "not measured: " + err.Error()
	}
	lacked := int64(0)
	if end > had {
		lacked = int64(end - had)
	}
	return &lacked, ""
}
