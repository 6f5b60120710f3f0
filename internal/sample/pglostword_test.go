package sample

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// How a lost node is worded: dated when a reading in the window failed, "by the window's
// close" when only the closing reading did (it was worded as a bare sampler error, and a
// test that waited for "lost at" failed when the loss fell between the last tick and the
// close), and the figures' reach from the last good reading — never a reach before the window.
func TestPGLostNodeWording(t *testing.T) {
	open := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	end := open.Add(6 * time.Second)
	gone := errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")
	for _, c := range []struct {
		name         string
		prev, failed time.Duration
		want         string
	}{
		{"in the window", 3200 * time.Millisecond, 4100 * time.Millisecond,
			"node standby2: lost at 4.1 s of the window (FATAL: terminating connection due to administrator command (SQLSTATE 57P01)): its figures cover the window until 3.2 s"},
		{"at the close", 5300 * time.Millisecond, 6200 * time.Millisecond,
			"node standby2: lost by the window's close at 6.0 s (its closing reading failed: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)): its figures cover the window until 5.3 s"},
		{"no reading in the window", -300 * time.Millisecond, 6100 * time.Millisecond,
			"node standby2: lost by the window's close at 6.0 s (its closing reading failed: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)): it has no figures in the window"},
	} {
		n := &pgNode{info: NodeInfo{Name: "standby2"}, err: gone, errAt: open.Add(c.failed)}
		n.prev.at = open.Add(c.prev)
		err := n.lost(open, end)
		if err.Error() != c.want || !errors.Is(err, gone) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, err, c.want)
		}
	}
	n := &pgNode{info: NodeInfo{Name: "standby2"}, err: gone}
	if got := n.lost(open, end).Error(); !strings.HasPrefix(got, "node standby2: FATAL") {
		t.Errorf("a node never sampled: %s", got)
	}
}
