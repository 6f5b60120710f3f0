package catalogue

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/target"
)

// Catalogue cases of where read intent lands.
//
// read-intent-on-primary: a hand-made cluster of a primary and one standby behind an
// in-process listener whose routing list falls back to the primary ('standby1','primary').
// The invalid run stops the standby first: every read-intent session of
// `stress --listener … --intent read-only` lands on the primary, as the list allows, and
// the run measured the primary. The control starts the standby again: the sessions land on
// it. The same for scan (of pg_class, which every database has).
func init() {
	readIntentCase("stress", "-q", "SELECT 1")
	readIntentCase("scan", "--table", "pg_class", "--rows", "100")
}

// readIntentCase registers the read-intent case of one command (its own flags in args).
func readIntentCase(command string, args ...string) {
	f := &fallbackCluster{}
	run := func(t *testing.T, env *catEnv) (string, string) {
		return catRun(t, env, append([]string{command, "--listener", f.lcs, "--intent", "read-only",
			"--threads", "2", "--iterations", "0", "--duration", "2s"}, args...)...)
	}
	addCase(catalogueCase{
		Verdict: "read-intent-on-primary",
		Name:    command + " --listener --intent read-only, the one standby down, routing list ('standby1','primary')",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			f.make(t)
			if err := f.h.Stop(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			f.waitLanding(t, false)
			return run(t, env)
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			f.make(t)
			f.h.Start(context.Background(), t, 1)
			f.waitLanding(t, true)
			return run(t, env)
		},
	})
}

// fallbackCluster is the read-intent case's own cluster and listener, made by whichever of
// its runs comes first (both run in the same subtest, which owns them).
type fallbackCluster struct {
	h   *clustertest.Handmade
	lcs string
}

func (f *fallbackCluster) make(t *testing.T) {
	if f.h != nil {
		return
	}
	f.h = clustertest.NewHandmade(t, 1)
	f.lcs = e2etest.HandmadeListener(t, f.h, "('standby1','primary')")
	t.Cleanup(func() { f.h = nil })
}

// waitLanding waits until a read-intent session through the listener lands on a standby
// (standby true) or on the primary: the listener has probed the standby's new state.
func (f *fallbackCluster) waitLanding(t *testing.T, standby bool) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := pgx.Connect(ctx, target.WithIntent(f.lcs, target.ReadOnly))
		if err == nil {
			var inRecovery bool
			err = c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery)
			c.Close(ctx)
			if err == nil && inRecovery == standby {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("read intent through the listener did not land on a standby=%v within a minute (last error %v)", standby, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// catRun runs agbench with args and --results in a fresh folder, logs its output under
// go test -v (the figures of the report), and returns the output and the folder.
func catRun(t *testing.T, env *catEnv, args ...string) (string, string) {
	t.Helper()
	res := env.Results(t)
	_, out := env.Run(t, append(args, "--results", res)...)
	if testing.Verbose() {
		t.Log(out)
	}
	return out, res
}
