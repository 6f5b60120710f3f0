package seed

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// smallData makes a few MB of table data with a known row count on the primary.
func smallData(t *testing.T, topo *cluster.Topology, rows int) {
	t.Helper()
	ctx := context.Background()
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE seeded AS SELECT g AS id, repeat('row ' || g, 20) AS txt FROM generate_series(1, $1::int) g`, rows); err != nil {
		t.Fatal(err)
	}
}

// checkServes checks that the new standby answers reads with the primary's rows and streams.
func checkServes(t *testing.T, topo *cluster.Topology, name string, rows int) {
	t.Helper()
	ctx := context.Background()
	n := topo.Node(name)
	if n == nil {
		t.Fatalf("%s not in the topology", name)
	}
	c, err := topo.Connect(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var got int
	var inRecovery bool
	if err := c.QueryRow(ctx, `SELECT count(*), pg_is_in_recovery() FROM seeded`).Scan(&got, &inRecovery); err != nil {
		t.Fatal(err)
	}
	if got != rows || !inRecovery {
		t.Fatalf("%s: %d rows (want %d), in recovery %v", name, got, rows, inRecovery)
	}
	p, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if _, err := p.Exec(ctx, `INSERT INTO seeded VALUES (-1, 'after seeding')`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM seeded WHERE id = -1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a row written after seeding never reached the new standby")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var state string
	if err := p.QueryRow(ctx, `SELECT state FROM pg_stat_replication WHERE application_name = $1`, name).Scan(&state); err != nil || state != "streaming" {
		t.Fatalf("%s: replication state %q, %v", name, state, err)
	}
	if _, err := p.Exec(ctx, `DELETE FROM seeded WHERE id = -1`); err != nil {
		t.Fatal(err)
	}
}

func TestSeedBothWaysWithAndWithoutCompression(t *testing.T) {
	t.Parallel() // owns its cluster: it adds standbys
	topo := clustertest.New(t, clustertest.Options{Standbys: 0})
	const rows = 50000
	smallData(t, topo, rows)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cases := []struct {
		method, compress string
	}{
		{MethodDirect, "none"},
		{MethodDirect, "lz4"},
		{MethodBackupRestore, "none"},
		{MethodBackupRestore, "zstd:3"},
		{MethodBackupRestore, "gzip"},
	}
	for i, tc := range cases {
		comp, err := ParseCompression(tc.compress)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		phasesSeen := map[string]bool{}
		rep, err := Seed(ctx, topo, Options{Method: tc.method, Compress: comp, PollInterval: 50 * time.Millisecond,
			Progress: func(p Progress) { mu.Lock(); phasesSeen[p.Phase] = true; mu.Unlock() }})
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.method, tc.compress, err)
		}
		t.Logf("%s/%s: %.2fs total, streamed %d, wire %d, ratio %.2f, phases %+v", tc.method, tc.compress, rep.TotalSeconds,
			rep.StreamedBytes, rep.WireBytes, rep.CompressionRatio, rep.Phases)
		checkServes(t, topo, rep.Standby, rows)
		want := []string{PhaseCheckpoint, PhaseTransfer, PhaseSync, PhaseStart, PhaseCatchUp, PhaseJoin}
		if tc.method == MethodBackupRestore {
			want = []string{PhaseCheckpoint, PhaseBackup, PhaseRestore, PhaseSync, PhaseStart, PhaseCatchUp, PhaseJoin}
		}
		var got []string
		for _, p := range rep.Phases {
			got = append(got, p.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: phases %v, want %v", tc.method, got, want)
		}
		if rep.StreamedBytes < 10<<20 || rep.WireBytes <= 0 || rep.ReceiverCPUSeconds <= 0 {
			t.Errorf("%s/%s: streamed %d, wire %d, receiver CPU %.3f", tc.method, tc.compress, rep.StreamedBytes, rep.WireBytes, rep.ReceiverCPUSeconds)
		}
		if !comp.None() && rep.CompressionRatio < 1.5 {
			t.Errorf("%s/%s: compression ratio %.2f on repetitive rows", tc.method, tc.compress, rep.CompressionRatio)
		}
		if comp.None() && rep.CompressionRatio > 1.2 {
			t.Errorf("%s/none: ratio %.2f without compression", tc.method, rep.CompressionRatio)
		}
		hist, err := History(topo.Dir)
		if err != nil || len(hist) != i+1 {
			t.Fatalf("history: %d records, %v", len(hist), err)
		}
		h := hist[i]
		if h.State != StateCompleted || h.Standby != rep.Standby || h.Method != tc.method || h.Compression != comp.String() || h.Attempts != 1 || h.SizeBytes != rep.StreamedBytes || h.End.IsZero() {
			t.Errorf("history record %+v", h)
		}
		if tc.method == MethodBackupRestore {
			left, _ := filepath.Glob(filepath.Join(topo.Dir, "backups", "*"))
			if len(left) != 0 {
				t.Errorf("backups left: %v", left)
			}
		}
		saved, err := cluster.LoadFile(filepath.Join(topo.Dir, "topology.json"))
		if err != nil || saved.Node(rep.Standby) == nil {
			t.Fatalf("saved topology lacks %s: %v", rep.Standby, err)
		}
	}
}

func TestSeedInterruptedCleansUp(t *testing.T) {
	t.Parallel() // owns its cluster: it interrupts a seeding
	topo := clustertest.New(t, clustertest.Options{Standbys: 0})
	smallData(t, topo, 200000) // ~ 40 MB: minutes at 32 kB/s
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	rep, err := Seed(ctx, topo, Options{Method: MethodDirect, MaxRate: 1 << 20, Name: "slow", PollInterval: 50 * time.Millisecond,
		Progress: func(p Progress) {
			if p.Phase == PhaseTransfer && p.Done > 2<<20 {
				once.Do(cancel)
			}
		}})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Seed = %v, %v; want cancelled", rep, err)
	}
	if topo.Node("slow") != nil {
		t.Fatal("half-made standby left in the topology")
	}
	if _, err := os.Stat(filepath.Join(topo.Dir, "nodes", "slow")); !os.IsNotExist(err) {
		t.Fatalf("data folder left: %v", err)
	}
	c, err := topo.Connect(context.Background(), topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var slots, backups int
	if err := c.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_replication_slots), (SELECT count(*) FROM pg_stat_progress_basebackup)`).Scan(&slots, &backups); err != nil {
		t.Fatal(err)
	}
	if slots != 0 {
		t.Fatalf("%d slots left", slots)
	}
	hist, _ := History(topo.Dir)
	if len(hist) != 1 || hist[0].State != StateInterrupted || !strings.Contains(hist[0].Reason, "canceled") {
		t.Fatalf("history: %+v", hist)
	}
}

func TestSeedBadInputMakesNothing(t *testing.T) {
	t.Parallel() // owns its cluster: it stops the primary
	topo := clustertest.New(t, clustertest.Options{Standbys: 1})
	ctx := context.Background()
	cases := []Options{
		{Name: "standby1"},
		{Name: "Bad-Name"},
		{Method: "copy"},
		{MaxRate: 10},
		{Sync: true},
	}
	for _, o := range cases {
		if _, err := Seed(ctx, topo, o); !agerr.IsBadInput(err) {
			t.Errorf("%+v: %v, want bad input", o, err)
		}
	}
	if small, ok := smallFS(t); ok {
		_, err := Seed(ctx, topo, Options{Method: MethodBackupRestore, BackupDir: small})
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "too little disk space") {
			t.Errorf("backup folder on a 1 MB file system: %v", err)
		}
	}
	if err := topo.StopNode(ctx, "primary"); err != nil {
		t.Fatal(err)
	}
	_, err := Seed(ctx, topo, Options{})
	if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "down") {
		t.Errorf("cluster down: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(topo.Dir, "nodes"))
	if len(entries) != 2 {
		t.Errorf("nodes folder holds %d entries", len(entries))
	}
	if h, _ := History(topo.Dir); len(h) != 0 {
		t.Errorf("history written on bad input: %+v", h)
	}
}

// smallFS mounts a 1 MB tmpfs for the test (root only; ok is false where mounting is not allowed).
func smallFS(t *testing.T) (string, bool) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "agbench-test", dir).CombinedOutput(); err != nil {
		t.Logf("no small file system to test the space check on: %v: %s", err, out)
		return "", false
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir, true
}

func TestSeedSyncJoinsSynchronousStandbys(t *testing.T) {
	t.Parallel() // owns its cluster: it adds a standby
	topo := clustertest.New(t, clustertest.Options{Standbys: 1, Commit: cluster.CommitSync})
	smallData(t, topo, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Seed(ctx, topo, Options{Method: MethodDirect, Sync: true, Name: "third"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Phase(PhaseSyncCommit).Name != PhaseSyncCommit {
		t.Fatalf("no %s phase: %+v", PhaseSyncCommit, rep.Phases)
	}
	c, err := topo.Connect(ctx, topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var names, state string
	if err := c.QueryRow(ctx, `SELECT current_setting('synchronous_standby_names'),
		(SELECT sync_state FROM pg_stat_replication WHERE application_name = 'third')`).Scan(&names, &state); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(names, `"third"`) || (state != "quorum" && state != "sync") {
		t.Fatalf("synchronous_standby_names %q, sync_state %q", names, state)
	}
	checkServes(t, topo, "third", 1000)
	if err := Drop(ctx, topo, "third"); err != nil {
		t.Fatal(err)
	}
	// The server takes the new setting on its reload signal, which reaches a session
	// asynchronously (it once still read the old value on the query right after Drop).
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.QueryRow(ctx, `SELECT current_setting('synchronous_standby_names')`).Scan(&names)
		if err == nil && !strings.Contains(names, "third") {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("after drop: synchronous_standby_names %q, %v", names, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
