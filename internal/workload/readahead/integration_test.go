package readahead_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// server is readahead.Server over a test cluster's primary.
type server struct{ t *cluster.Topology }

func (s server) Connect(ctx context.Context, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(s.t.ConnString(s.t.Primary(), db))
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}
func (s server) Restart(ctx context.Context) error {
	if err := s.t.StopNode(ctx, s.t.Primary().Name); err != nil {
		return err
	}
	return s.t.StartNode(ctx, s.t.Primary().Name)
}
func (s server) DataDir() string    { return s.t.Primary().DataDir }
func (s server) OSUser() (int, int) { return s.t.OSUser.UID, s.t.OSUser.GID }
func (s server) HasStandbys() bool  { return len(s.t.Standbys()) > 0 }

// pg18Bin is where scripts/get-pg18.sh puts PostgreSQL 18 (or AGBENCH_PG18_BIN).
func pg18Bin() string {
	if d := os.Getenv("AGBENCH_PG18_BIN"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/agbench/pg18/bin"
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "agbench", "pg18", "bin")
}

func TestColdPrefetchOffOnPG15(t *testing.T) {
	clustertest.Require(t)
	topo := clustertest.New(t, clustertest.Options{})
	checkExperiment(t, topo)
}

func TestColdPrefetchOffOnPG18(t *testing.T) {
	clustertest.Require(t)
	bin := pg18Bin()
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		t.Skipf("no PostgreSQL 18 at %s (run scripts/get-pg18.sh)", bin)
	}
	t.Setenv("AGBENCH_PG_BIN", bin)
	topo := clustertest.New(t, clustertest.Options{})
	checkExperiment(t, topo)
}

func checkExperiment(t *testing.T, topo *cluster.Topology) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := readahead.Config{Rows: 200_000, RangeIDs: 50_000, JoinIDs: 300, Repeat: 1, Progress: func(l string) { t.Log(l) }}
	e, err := readahead.Setup(ctx, server{topo}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			e.Close()
		}
	}()
	cond := e.Conditions()
	t.Logf("conditions: %+v", cond)
	ms, err := e.RunAll(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2*len(readahead.QueryNames) {
		t.Fatalf("%d measurements, want %d", len(ms), 2*len(readahead.QueryNames))
	}
	byKey := map[string]readahead.Measurement{}
	for _, m := range ms {
		t.Logf("%s %s: %.1f ms hit %d read %d io %d x %.1f kB dev %d x %d B; %s", m.Query, readahead.Variant(m.Prefetch), m.ElapsedMs,
			m.Plan.SharedHit, m.Plan.SharedRead, m.IOOps, m.AvgIOKB(), m.DevOps, m.DevBytes, m.Plan.Plan())
		byKey[m.Query+readahead.Variant(m.Prefetch)] = m
		if !m.Cold || m.Plan.SharedRead == 0 {
			t.Errorf("%s %s: not cold: %d pages read", m.Query, readahead.Variant(m.Prefetch), m.Plan.SharedRead)
		}
		if !m.NodeOK {
			t.Errorf("%s: plan %s lacks the intended node", m.Query, m.Plan.Plan())
		}
		if cond.DeviceName != "" && (m.DevOps == 0 || m.DevBytes < m.Plan.SharedRead*8192/2) {
			t.Errorf("%s: device read %d ops, %d bytes for %d pages", m.Query, m.DevOps, m.DevBytes, m.Plan.SharedRead)
		}
		if m.IOOps == 0 || m.AvgIOKB() < 4 {
			t.Errorf("%s: %d IO ops of %.1f kB", m.Query, m.IOOps, m.AvgIOKB())
		}
	}
	// Prefetch on reads the full scan in larger IOs: the kernel's read-ahead on 15, read
	// combining (io_combine_limit) on 17+; off, each IO is at most one page.
	off, on := byKey["full"+readahead.Variant(false)], byKey["full"+readahead.Variant(true)]
	if off.AvgIOKB() > 8.01 || on.AvgIOKB() < 2*off.AvgIOKB() {
		t.Errorf("full scan: average IO %.1f kB off, %.1f kB on; want at most 8 off and much larger on", off.AvgIOKB(), on.AvgIOKB())
	}
	if off.Plan.SharedRead != on.Plan.SharedRead {
		t.Errorf("full scan read %d pages off and %d on; want the same", off.Plan.SharedRead, on.Plan.SharedRead)
	}
	// Warm: run each query twice without emptying the caches; the second reads nothing.
	for _, q := range readahead.Queries(cfg.RangeIDs, cfg.JoinIDs) {
		if _, err := e.Measure(ctx, q, true, false, 0); err != nil {
			t.Fatal(err)
		}
		m, err := e.Measure(ctx, q, true, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		if m.Plan.SharedRead != 0 || m.Cold || m.Plan.SharedHit == 0 || (cond.DeviceName != "" && m.DevOps != 0) {
			t.Errorf("%s warm: hit %d read %d device ops %d; want hits only", q.Name, m.Plan.SharedHit, m.Plan.SharedRead, m.DevOps)
		}
	}
	mount := cond.Mount
	closed = true
	if err := e.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if mount != "" {
		if _, err := os.Stat(filepath.Dir(mount)); !os.IsNotExist(err) {
			t.Errorf("device folder %s still there after Close (%v)", filepath.Dir(mount), err)
		}
		if b, _ := os.ReadFile("/proc/mounts"); strings.Contains(string(b), mount) {
			t.Errorf("%s still mounted after Close", mount)
		}
	}
	c, err := server{topo}.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var dbs, direct int
	c.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", readahead.Database).Scan(&dbs)
	c.QueryRow(ctx, "SELECT count(*) FROM pg_settings WHERE name = 'debug_io_direct' AND setting <> ''").Scan(&direct)
	if dbs != 0 || direct != 0 {
		t.Errorf("after Close: %d experiment databases, debug_io_direct set: %d", dbs, direct)
	}
}
