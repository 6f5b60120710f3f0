package tpcc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// Issue 17: the lag follower of a login without pg_monitor records no lag (never 0) and
// says why; the superuser's records it.
func TestSamplerLagOfAnUnprivilegedLogin(t *testing.T) {
	h := clustertest.NewHandmade(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := h.Admin(ctx, t, 0)
	defer admin.Close(context.Background())
	for _, q := range []string{"CREATE SCHEMA tpcc", "CREATE TABLE tpcc.district (d_next_o_id int)", "INSERT INTO tpcc.district VALUES (1)",
		"GRANT USAGE ON SCHEMA tpcc TO app", "GRANT SELECT ON tpcc.district TO app"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, user := range []string{clustertest.HandmadeApp, clustertest.HandmadeAdmin} {
		cfg, err := ConnConfig(h.ConnString(0, user), "--primary")
		if err != nil {
			t.Fatal(err)
		}
		s, err := (&Workload{Primary: cfg}).NewSampler(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st := &result.Step{Window: result.Window{Start: time.Now()}}
		if err := s.Start(ctx, st); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		st.Window.End = time.Now()
		if err := s.Stop(ctx, st); err != nil {
			t.Fatal(err)
		}
		s.conn.Close(context.Background())
		_, measured := st.Counters[CounterLagBytesMax]
		warned := strings.Contains(strings.Join(st.Warnings, "\n"), "replication lag not measured: the login app lacks pg_read_all_stats")
		switch {
		case user == clustertest.HandmadeApp && (measured || !warned):
			t.Errorf("app: lag recorded %v, warned %v: %v %q", measured, warned, st.Counters, st.Warnings)
		case user == clustertest.HandmadeAdmin && (!measured || warned):
			t.Errorf("admin: lag recorded %v, warned %v: %v %q", measured, warned, st.Counters, st.Warnings)
		}
	}
}
