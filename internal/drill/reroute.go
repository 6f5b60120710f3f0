package drill

import (
	"context"
	"fmt"
	"net"
	"slices"
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
	if t.Listener == nil || t.Listener.Listen == "" || !t.ListenerAlive() {
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
	srv     server
	standby bool
}

// land asks the server of a new session where it is.
func land(ctx context.Context, c *pgx.Conn) (srv server, standby bool, err error) {
	qctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	err = c.QueryRow(qctx, `SELECT pg_is_in_recovery(), `+serverColumns).Scan(&standby, &srv.port, &srv.started)
	return srv, standby, err
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
		if t.noReroute != "" {
			dc.RerouteNote = "not measured: " + t.noReroute
		}
		return
	}
	if t.faultAt.IsZero() {
		dc.RerouteNote = "not measured: no fault"
		return
	}
	var notes []string
	slices.SortStableFunc(t.landings, func(a, b landing) int { return a.at.Compare(b.at) })
	for _, l := range t.landings {
		s := l.at.Sub(t.faultAt).Seconds()
		switch {
		case l.op == OpWrite && dc.RerouteWriteSeconds == nil && l.srv.is(t.newSrv) && !l.standby:
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
		notes = append(notes, "no new read-intent session reached a standby after the fault")
	}
	if len(notes) > 0 {
		dc.RerouteNote = "not measured: " + strings.Join(notes, "; ")
	}
}

// probeEvery is how often, through a listener, the probe opens a new write session and a
// new read-intent session after the fault.
const probeEvery = 100 * time.Millisecond

// probeRoutes, through a listener, opens from the fault on a new write session and a new
// read-intent session every probeEvery and notes where each landed, until the listener has
// sent a write session to the primary (the new one after a failover) and a read-intent
// session to a standby, or the load stops: the load's own sessions may live through the
// failover and make no new one. The probe's failures are not the load's errors.
func (l *load) probeRoutes(ctx context.Context) {
	defer l.wg.Done()
	for l.running(ctx) {
		sleep(ctx, probeEvery)
		l.tally.mu.Lock()
		fault, srv := l.tally.faultAt, l.tally.newSrv
		var w, r bool
		for _, g := range l.tally.landings {
			w = w || (g.op == OpWrite && srv.port != 0 && g.srv.is(srv) && !g.standby)
			r = r || (g.op == OpRead && g.standby)
		}
		l.tally.mu.Unlock()
		if fault.IsZero() || (w && r) {
			continue
		}
		for _, p := range []struct {
			op, url string
			done    bool
		}{{OpWrite, l.writeURL, w}, {OpRead, l.readURL, r}} {
			if p.done {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			if c, err := pgx.Connect(cctx, p.url); err == nil {
				if srv, standby, err := land(cctx, c); err == nil {
					l.tally.landed(landing{op: p.op, at: time.Now(), srv: srv, standby: standby})
				}
				c.Close(context.Background())
			}
			cancel()
		}
	}
}
