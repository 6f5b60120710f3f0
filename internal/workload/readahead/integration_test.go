package readahead_test

import (
	"context"
	"os"
	"path/filepath"
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
func (s server) DataDir() string        { return s.t.Primary().DataDir }
func (s server) OSUser() (int, int)     { return s.t.OSUser.UID, s.t.OSUser.GID }
func (s server) HasStandbys() bool      { return len(s.t.Standbys()) > 0 }

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
	e, err := readahead.Setup(ctx, server{topo}, readahead.Config{Rows: 200_000, RangeIDs: 50_000, JoinIDs: 300, Repeat: 1, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	cond := e.Conditions()
	t.Logf("conditions: %+v", cond)
	ms, err := e.RunAll(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		t.Logf("%s %s: %.1f ms hit %d read %d io %d x %.1f kB dev %d; %s", m.Query, readahead.Variant(m.Prefetch), m.ElapsedMs,
			m.Plan.SharedHit, m.Plan.SharedRead, m.IOOps, m.AvgIOKB(), m.DevOps, m.Plan.Plan())
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }
