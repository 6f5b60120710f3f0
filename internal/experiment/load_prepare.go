package experiment

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/privilege"
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
	c, err := target.Connect(ctx, l.ConnString(plan[0].Params, 0), "agbench")
	if err != nil {
		return fmt.Errorf("target unreachable: %w", err)
	}
	defer c.Close(context.WithoutCancel(ctx))
	return stress.CheckQueries(ctx, c, queries, width)
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
