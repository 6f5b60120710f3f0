package listener

import (
	"context"
	"fmt"

	"github.com/agbench/agbench/internal/cluster"
)

// probePatroni is the health probe of a backend under Patroni: its role, WAL position,
// replay pause and timeline as its Patroni reports them (GET /patroni). A member whose
// PostgreSQL is not running, or whose Patroni does not answer, fails the probe: a primary
// left running after its Patroni died is not one the listener sends sessions to.
func probePatroni(ctx context.Context, url string) (probeResult, error) {
	s, err := cluster.PatroniStateAt(ctx, url)
	if err != nil {
		return probeResult{}, fmt.Errorf("Patroni at %s: %w", url, err)
	}
	if s.State != "running" && s.State != "streaming" {
		return probeResult{}, fmt.Errorf("Patroni at %s: PostgreSQL is %s", url, s.State)
	}
	var r probeResult
	switch s.Role {
	case "master", "primary":
		if s.Xlog.Location != nil {
			r.lsn = *s.Xlog.Location
		}
		if s.Timeline > 0 {
			r.timeline = uint32(s.Timeline)
		} else {
			r.timelineErr = "Patroni did not report it"
		}
	case "replica", "standby_leader":
		r.inRecovery, r.paused = true, s.Xlog.Paused
		if s.Xlog.Replayed != nil {
			r.lsn = *s.Xlog.Replayed
		}
	default:
		return probeResult{}, fmt.Errorf("Patroni at %s: role %q", url, s.Role)
	}
	return r, nil
}
