package drill

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/links"
)

// A node whose answers take longer than a round's wait (a slow link) is late, never failed:
// its late answer comes in a later round, says it accepts writes, and gives the server's own
// port, not the link's. Before, a question that outlasted the wait made the node not
// writable, and a primary on a slow link was timed as failed while it answered.
func TestProberLateIsNotGone(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{Standbys: 1})
	p, s := topo.Primary(), topo.Standbys()[0]
	const rtt = 300 * time.Millisecond
	e, l := linked(t, rtt, clustertest.OrdinaryUser+":"+clustertest.OrdinaryPassword, topo.Database,
		link("p", p.ClientHost(), p.ClientPort()), link("s", s.ClientHost(), s.ClientPort()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	probe := newProber(e, rtt/10) // every question outlasts its round
	defer probe.close()
	var late, writable, standby int
	for writable < 3 {
		if ctx.Err() != nil {
			t.Fatalf("%d late, %d writable answers in a minute", late, writable)
		}
		a := probe.ask(ctx)
		if at, gone := goneAt("p", a); gone {
			t.Fatalf("the primary was taken as gone from %v: %+v", at, a)
		}
		switch pa := a["p"]; {
		case pa.late:
			late++
		case pa.writable:
			writable++
			if pa.srv.port != p.Port {
				t.Fatalf("the primary gave port %d, want its own %d (the link's is %s)", pa.srv.port, p.Port, l.Addr("p"))
			}
		}
		if sa := a["s"]; !sa.late && !sa.writable && !sa.srv.started.IsZero() {
			standby++
		}
		sleep(ctx, observePoll)
	}
	if late == 0 || standby == 0 {
		t.Fatalf("%d late answers, %d from the standby: want some of each", late, standby)
	}
}

// link is a link named name to a server at host:port.
func link(name, host string, port int) links.Link {
	return links.Link{Name: name, Listen: "127.0.0.1:0", Upstream: fmt.Sprintf("%s:%d", host, port)}
}

// linked starts the links, each adding rtt to a round trip, and returns endpoints to their
// servers through them (the first the primary) as login (user:password) to db; the links
// close when the test ends.
func linked(t *testing.T, rtt time.Duration, login, db string, ls ...links.Link) (*Endpoints, *links.Server) {
	t.Helper()
	srv, err := links.Start(ls, links.Shape{Latency: rtt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	var nodes []string
	for _, l := range ls {
		nodes = append(nodes, fmt.Sprintf("%s=postgres://%s@%s/%s?sslmode=disable", l.Name, login, srv.Addr(l.Name), db))
	}
	e, err := NewEndpoints(nodes[0], nodes[1:], "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, srv
}
