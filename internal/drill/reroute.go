package drill

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/routing"
)

// viaListener returns the load's connection strings through the cluster's listener, when it
// has one running: writers without intent (the listener sends them to the primary), readers
// with read intent (to a standby by the routing list). ok is false when the cluster has none.
func viaListener(t *cluster.Topology) (write, read string, ok bool) {
	if t.Listener == nil || t.Listener.Listen == "" || t.Listener.PID <= 0 || !cluster.Alive(t.Listener.PID) {
		return "", "", false
	}
	host, port, err := net.SplitHostPort(t.Listener.Listen)
	if err != nil {
		return "", "", false
	}
	base := fmt.Sprintf("host=%s port=%s user=%s dbname=%s passfile='%s' sslmode=disable connect_timeout=%d application_name=agbench-drill",
		host, port, t.Superuser, t.Database, strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(t.PassFile), int(connectTimeout.Seconds()))
	return base, base + " " + routing.IntentParam + "=read-only", true
}

// landing is where a new session of the load landed: the server's port and whether it is
// a standby. Through a listener the connection's own address is the listener's, so the
// server is asked.
type landing struct {
	op      string
	at      time.Time
	port    int
	standby bool
}

// land asks the server of a new session where it is.
func land(ctx context.Context, c *pgx.Conn) (port int, standby bool, err error) {
	qctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	err = c.QueryRow(qctx, `SELECT coalesce(inet_server_port(), 0), pg_is_in_recovery()`).Scan(&port, &standby)
	return port, standby, err
}

func (t *tally) landed(l landing) {
	t.mu.Lock()
	if !t.faultAt.IsZero() {
		t.landings = append(t.landings, l)
	}
	t.mu.Unlock()
}

// reroute fills dc's listener reroute times: from the fault to the first new write session
// that the listener sent to the primary (the new one after a failover), and to the first new
// read-intent session it sent to a standby. The caller holds the lock.
func (t *tally) reroute(dc *result.DrillCycle, listener bool) {
	if !listener {
		dc.RerouteNote = "not measured: the cluster has no listener running (the load connects to the nodes directly)"
		return
	}
	if t.faultAt.IsZero() {
		dc.RerouteNote = "not measured: no fault"
		return
	}
	var notes []string
	for _, l := range t.landings {
		s := l.at.Sub(t.faultAt).Seconds()
		switch {
		case l.op == OpWrite && dc.RerouteWriteSeconds == nil && l.port == t.newPort && !l.standby:
			dc.RerouteWriteSeconds = &s
			dc.Events = append(dc.Events, result.DrillEvent{At: l.at, Event: result.EventRerouteWrite})
		case l.op == OpRead && dc.RerouteReadSeconds == nil && l.standby:
			dc.RerouteReadSeconds = &s
			dc.Events = append(dc.Events, result.DrillEvent{At: l.at, Event: result.EventRerouteRead})
		}
	}
	if dc.RerouteWriteSeconds == nil {
		notes = append(notes, "no new write session reached the primary after the fault")
	}
	if dc.RerouteReadSeconds == nil {
		notes = append(notes, "no new read-intent session reached a standby after the fault (the readers may have kept theirs)")
	}
	if len(notes) > 0 {
		dc.RerouteNote = "not measured: " + strings.Join(notes, "; ")
	}
}
