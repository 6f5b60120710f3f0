package drill

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// prober keeps one connection per node to ask whether it accepts writes.
//
// A question that outlasts a round's wait stays asked: a slow link or a busy server answers
// late, and a late "writable" says the node was there. The node is meanwhile late, neither
// answered nor failed; the caller decides what that means (awaitFailover times a fault from
// the round that asked the question that never got its answer). A question gets stateWait
// in all; past it, or on any error, its connection is closed and the node has failed.
type prober struct {
	e     *Endpoints
	conns map[string]*pgx.Conn // idle connections, one per node
	wait  time.Duration        // how long a round waits for the answers
	// logins are the logins under way, one per node without a connection, each given
	// stateWait; asked tells whether a round has been asked yet.
	logins map[string]chan *pgx.Conn
	asked  bool
	// asking are the questions under way, one per node at most, and when each was asked;
	// replies brings their answers; stop ends them when the prober closes.
	asking  map[string]time.Time
	replies chan reply
	ctx     context.Context
	stop    context.CancelFunc
}

// reply is one node's answer to a question: a connection back when it answered.
type reply struct {
	name string
	a    answer
	conn *pgx.Conn
}

// Waits for a node's answer. While a failover is timed, a round waits probeWait for the
// nodes' answers (a question not answered by then stays asked, and its node is late). A
// login is given stateWait, beside the rounds rather than in them: a busy server's or a
// slow link's login took over a second (a primary that was answering was timed as
// failed), and a node that does not answer a login at all (a cut link) would hold up
// every round. The first round waits for its logins, so it has every node's answer. A
// check of the cluster's state (its start, its end, a cycle's outcome) asks once and
// waits stateWait.
const (
	probeWait = time.Second
	stateWait = 10 * time.Second
)

func newProber(e *Endpoints, wait time.Duration) *prober {
	ctx, stop := context.WithCancel(context.Background())
	return &prober{e: e, conns: map[string]*pgx.Conn{}, wait: wait, logins: map[string]chan *pgx.Conn{},
		asking: map[string]time.Time{}, replies: make(chan reply, len(e.Nodes)), ctx: ctx, stop: stop}
}

// close ends the questions and logins under way and closes every connection, the late
// ones' once their questions have ended.
func (p *prober) close() {
	p.stop()
	for _, c := range p.conns {
		c.Close(context.Background())
	}
	for _, login := range p.logins {
		go func() {
			if c := <-login; c != nil {
				c.Close(context.Background())
			}
		}()
	}
	for range p.asking {
		go func() {
			if r := <-p.replies; r.conn != nil {
				r.conn.Close(context.Background())
			}
		}()
	}
}

// answer is what a node said when probed: whether it accepts writes, and its server (zero
// when it did not answer). late says the node's question is still unanswered after a
// round's wait: neither answered nor failed. asked is when the question was asked (for a
// node without a connection, the round).
type answer struct {
	writable bool
	srv      server
	late     bool
	asked    time.Time
}

// logIn starts a login to every node without a connection, question or login under way,
// and takes the connections of the logins that ended: the first round waits for them,
// later rounds take those ended already.
func (p *prober) logIn(ctx context.Context) {
	for _, n := range p.e.Nodes {
		if _, ok := p.logins[n.Name]; ok || p.conns[n.Name] != nil || !p.asking[n.Name].IsZero() {
			continue
		}
		login := make(chan *pgx.Conn, 1)
		p.logins[n.Name] = login
		go func() {
			lctx, cancel := context.WithTimeout(ctx, stateWait)
			defer cancel()
			c, err := pgx.Connect(lctx, n.Conn)
			if err != nil {
				c = nil
			}
			login <- c
		}()
	}
	for name, login := range p.logins {
		var c *pgx.Conn
		if p.asked {
			select {
			case c = <-login:
			default:
				continue
			}
		} else {
			c = <-login
		}
		delete(p.logins, name)
		if c != nil {
			p.conns[name] = c
		}
	}
	p.asked = true
}

// ask asks every node with an idle connection whether it is out of recovery, when its
// postmaster started and its port, waits up to p.wait for those answers, and takes the
// answers that came meanwhile to questions of earlier rounds. A node with no connection has
// not answered (not writable); a node whose question is still under way is late.
func (p *prober) ask(ctx context.Context) map[string]answer {
	round := time.Now()
	p.logIn(ctx)
	now := time.Now()
	var asked []string
	for name, c := range p.conns {
		delete(p.conns, name)
		p.asking[name] = now
		asked = append(asked, name)
		go p.question(ctx, name, c, now)
	}
	out := map[string]answer{}
	for _, n := range p.e.Nodes {
		out[n.Name] = answer{asked: round}
	}
	take := func(r reply) {
		delete(p.asking, r.name)
		out[r.name] = r.a
		if r.conn != nil {
			p.conns[r.name] = r.conn
		}
	}
	// The round waits for its own questions only: one still under way from an earlier round
	// would hold every round to p.wait, and a promotion would be seen that much later.
	waiting := func() bool {
		for _, name := range asked {
			if !p.asking[name].IsZero() {
				return true
			}
		}
		return false
	}
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	for waiting() {
		select {
		case r := <-p.replies:
			take(r)
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		break
	}
	for more := true; more; {
		select {
		case r := <-p.replies:
			take(r)
		default:
			more = false
		}
	}
	for name, at := range p.asking {
		out[name] = answer{late: true, asked: at}
	}
	return out
}

// question asks one node, on its own connection, and replies with the answer and the
// connection, or with no connection (closed) when the node did not answer within stateWait.
func (p *prober) question(ctx context.Context, name string, c *pgx.Conn, at time.Time) {
	qctx, cancel := context.WithTimeout(ctx, stateWait)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	a := answer{asked: at}
	var rec bool
	// The simple protocol asks in one round trip; pgx's default prepares the statement
	// first, a second round trip.
	err := c.QueryRow(qctx, `SELECT pg_is_in_recovery(), `+serverColumns,
		pgx.QueryExecModeSimpleProtocol).Scan(&rec, &a.srv.port, &a.srv.started)
	if err != nil {
		c.Close(context.Background())
		p.replies <- reply{name: name, a: answer{asked: at}}
		return
	}
	a.writable = !rec
	p.replies <- reply{name: name, a: a, conn: c}
}
