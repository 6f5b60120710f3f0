package listener

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

func TestLSNText(t *testing.T) {
	for _, s := range []string{"0/0", "16/B374D848", "FFFFFFFF/FFFFFFFF"} {
		v, err := parseLSN(s)
		if err != nil || cluster.FormatLSN(v) != s {
			t.Errorf("%s: %X %v -> %s", s, v, err, cluster.FormatLSN(v))
		}
	}
	for _, s := range []string{"", "0", "x/1", "1/", "100000000/0"} {
		if _, err := parseLSN(s); err == nil {
			t.Errorf("parseLSN(%q) accepted", s)
		}
	}
}

func TestLagFromPrimaryHistory(t *testing.T) {
	h := &health{}
	t0 := time.Unix(1000, 0)
	for i, lsn := range []uint64{100, 100, 200, 300, 300, 400} {
		h.record(t0.Add(time.Duration(i)*time.Second), lsn)
	}
	if len(h.hist) != 4 {
		t.Fatalf("history keeps the first sighting of each LSN: %v", h.hist)
	}
	now := t0.Add(10 * time.Second)
	cases := []struct {
		replay uint64
		want   time.Duration
	}{
		{400, 0},               // caught up
		{500, 0},               // ahead of the last sample (the primary moved on since)
		{300, 5 * time.Second}, // behind since the primary was first seen at 400 (t0+5s)
		{250, 7 * time.Second}, // first sample past 250 is 300 at t0+3s
		{0, 10 * time.Second},  // behind the whole history
	}
	for _, c := range cases {
		if got := h.lagOf(c.replay, now); got != c.want {
			t.Errorf("lagOf(%d) = %s, want %s", c.replay, got, c.want)
		}
	}
}

// A login refused by a server that refuses TLS (pgx's sslmode=prefer tries TLS first) is said
// as the server said it, not as the refused TLS attempt.
func TestRootCauseNamesARefusedLogin(t *testing.T) {
	h := clustertest.NewHandmade(t, 0)
	cs := strings.Replace(h.URL(0, clustertest.HandmadeApp), "sslmode=disable", "sslmode=prefer", 1)
	_, err := pgconn.Connect(context.Background(), strings.Replace(cs, clustertest.HandmadeAppPW, "wrong", 1))
	if got := rootCause(err); !strings.Contains(got, "password authentication failed") || !strings.Contains(got, "28P01") {
		t.Fatalf("rootCause = %q (from %v)", got, err)
	}
}

func TestRootCauseIsShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := pgconn.Connect(ctx, "host=127.0.0.1 port=1 user=x sslmode=disable connect_timeout=5")
	if err == nil {
		t.Skip("something listens on port 1")
	}
	if got := rootCause(err); got != "connection refused" || strings.Contains(got, "dial") {
		t.Fatalf("rootCause = %q (from %v)", got, err)
	}
}
