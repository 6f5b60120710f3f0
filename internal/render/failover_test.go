package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/status"
)

func TestFailover(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	lacked := int64(3 << 20)
	for _, c := range []struct {
		name   string
		r      status.FailoverReport
		waited bool
		want   string
	}{
		{"planned, sync, the old primary rejoined", status.FailoverReport{From: "primary", To: "standby1", Planned: true,
			WriteOutage: 1234 * time.Millisecond, Total: 5 * time.Second, OldPrimary: "streaming",
			PromotedAt: at, RejoinedAt: at.Add(2 * time.Second)}, true, `
failover primary -> standby1, planned (primary shut down cleanly first: no data loss)
writes unavailable for 1.234s; total 5.000s; old primary primary: streaming
commits waited for 3.234s: standby1 had no synchronous standby until primary rejoined as one (pg_rewind, start, streaming)

`},
		{"silent, fenced, WAL lacked, commits still wait", status.FailoverReport{From: "primary", To: "standby2", Silent: true,
			FencedAt: at, WriteOutage: 11 * time.Second, Total: 20 * time.Second, OldPrimary: "stopped", WALLacked: &lacked}, true, `
failover primary -> standby2, unplanned (primary did not answer: fenced)
writes unavailable for 11.000s; total 20.000s; old primary primary: stopped
commits still wait: standby2 has no synchronous standby until primary rejoins as one (it did not)
WAL standby2 lacked of primary: 3M

`},
		{"fenced, WAL unmeasured, a problem", status.FailoverReport{From: "primary", To: "standby1", FencedAt: at, OldPrimary: "rewind failed",
			WALLackedNote: "– (the old primary's WAL could not be read)", Problems: map[string]string{"standby2": "re-point: timeout"}}, false, `
failover primary -> standby1, unplanned (primary fenced)
writes unavailable for 0.000s; total 0.000s; old primary primary: rewind failed
WAL standby1 lacked of primary: – (the old primary's WAL could not be read)
problem on standby2: re-point: timeout

`},
		{"down", status.FailoverReport{From: "primary", To: "standby1", OldPrimary: "streaming"}, false, `
failover primary -> standby1, unplanned (primary was down)
writes unavailable for 0.000s; total 0.000s; old primary primary: streaming

`},
	} {
		var b bytes.Buffer
		Failover(&b, &c.r, c.waited)
		if b.String() != c.want {
			t.Errorf("%s: got\n%q\nwant\n%q", c.name, b.String(), c.want)
		}
	}
}
