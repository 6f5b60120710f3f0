package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/privilege"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/pgops"
	"github.com/agbench/agbench/internal/workload/stress"
)

// replayWait bounds waiting for the standbys to replay what was written before a run.
const replayWait = 5 * time.Minute

// InitTable makes the demo table of rows rows on the primary when it does not exist, and
// waits until the standbys have replayed it. It says whether it made the table, and how
// long that took. A login that may not make it is refused first (bad input naming the grant).
func (l *Load) InitTable(ctx context.Context, name string, rows int64) (created bool, took time.Duration, err error) {
	need := privilege.Needs{Command: l.Command + " --init", Primary: []privilege.Need{privilege.CreateTableIfMissing(name)}}
	if err := privilege.Check(ctx, l.Target, need); err != nil {
		return false, 0, err
	}
	c, err := target.Connect(ctx, l.Target.Primary, "agbench")
	if err != nil {
		return false, 0, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	start := time.Now()
	created, err = pgops.InitTable(ctx, c, name, rows)
	if err != nil {
		return created, 0, err
	}
	took = time.Since(start)
	return created, took, l.Target.WaitReplayed(ctx, replayWait)
}

// initTable makes the demo table of --init rows (none for 0) and says so when it made it.
func (l *Load) initTable(ctx context.Context, r *Running, name string, rows int64) error {
	if rows <= 0 {
		return nil
	}
	created, took, err := l.InitTable(ctx, name, rows)
	if created && took > 0 {
		r.Emit(Log{Line: fmt.Sprintf("made table %s with %d rows in %.1fs", name, rows, took.Seconds())})
	}
	return err
}

// CheckQueries prepares every query on a session of the first step (stress.CheckQueries),
// so that a query the server rejects is bad input before anything runs.
func (l *Load) CheckQueries(ctx context.Context, queries []string, width int) error {
	plan := l.Plan()
	if len(plan) == 0 {
		return nil
	}
	cs := l.ConnString(plan[0].Params, 0)
	c, err := target.Connect(ctx, cs, "agbench")
	if err != nil {
		return fmt.Errorf("target unreachable: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	err = stress.CheckQueries(ctx, c, queries, width)
	var qe *stress.QueryError
	if errors.As(err, &qe) {
		if why := privilege.Denied(ctx, c, fmt.Sprintf("run query %d %q", qe.Index+1, qe.Query), qe.Query, qe.Err); why != "" {
			return agerr.BadInputf("%s %s: %s", l.flagOf(cs), result.Redact(cs), why)
		}
	}
	if err != nil {
		return err
	}
	return l.checkQueryPrivileges(ctx, c, cs, queries, width)
}

// checkQueryPrivileges asks the server to plan each prepared query (EXPLAIN EXECUTE, which
// checks the privileges on the tables it reads and writes, as preparing does not) and
// refuses one the login may not run, naming the GRANT. A query that cannot be explained (a
// utility statement) is left to the run.
func (l *Load) checkQueryPrivileges(ctx context.Context, c *pgx.Conn, cs string, queries []string, width int) error {
	params := ""
	if width > 0 {
		params = "(" + strings.TrimSuffix(strings.Repeat("NULL, ", width), ", ") + ")"
	}
	for i, q := range queries {
		_, err := c.Exec(ctx, fmt.Sprintf("EXPLAIN EXECUTE agbench_check%d%s", i, params))
		if why := privilege.Denied(ctx, c, fmt.Sprintf("run query %d %q", i+1, q), q, err); why != "" {
			return agerr.BadInputf("%s %s: %s", l.flagOf(cs), result.Redact(cs), why)
		}
	}
	return nil
}

// flagOf names the server of connection string cs as the command line gave it.
func (l *Load) flagOf(cs string) string {
	t := l.Target
	switch {
	case cs == t.Primary:
		return t.FlagOfPrimary()
	case t.Listener != "" && strings.HasPrefix(cs, t.Listener):
		return "--listener"
	}
	for i, s := range t.Standbys {
		if cs == s {
			return t.FlagOfStandby(i)
		}
	}
	return "the routing comparison's listener"
}

// dropCachesFile empties the OS page cache when "3" is written to it (root only).
const dropCachesFile = "/proc/sys/vm/drop_caches"

// ColdCache is a cold-cache hook for a workload's step (scan --cold): it restarts the
// cluster's servers and drops the OS page cache before the step, and makes the run one
// whose servers restart (no database sampler can follow them). Where the OS cache cannot
// be dropped, the run's warnings say once that it was warm at the OS level.
func (l *Load) ColdCache() func(ctx context.Context) error {
	l.Restarts = true
	return func(ctx context.Context) error {
		note, err := l.coldCache(ctx)
		if note != "" && len(l.notes) == 0 {
			l.notes = append(l.notes, note)
		}
		return err
	}
}

// coldCache restarts the cluster and drops the OS page cache. It returns a note when the
// OS cache could not be dropped (the run was then warm at the OS level).
func (l *Load) coldCache(ctx context.Context) (string, error) {
	topo := l.Target.Topo
	if err := topo.Stop(ctx); err != nil {
		return "", err
	}
	note := ""
	exec.CommandContext(ctx, "sync").Run()
	if err := os.WriteFile(dropCachesFile, []byte("3\n"), 0o200); err != nil {
		note = "OS page cache not dropped (" + strings.TrimSpace(err.Error()) + "): servers restarted, OS cache warm"
	}
	if err := topo.Start(ctx); err != nil {
		return note, err
	}
	return note, l.WaitRoutes(ctx)
}
