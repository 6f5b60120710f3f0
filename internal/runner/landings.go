package runner

import (
	"sort"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

// madeSessions is one VU's record of every session its worker made (workload.Lander):
// those it began with and those made again after a loss, each where it landed, and for a
// worker of one session the operations of the window it ran there. Only its VU writes it;
// the runner reads it after the VUs have ended.
type madeSessions struct {
	made []madeSession
	// cur is, for each of the worker's sessions now (its Landings), its entry in made.
	cur []int
}

// madeSession is one session a worker made: where it landed and, when the worker had no
// other session, the operations of the window (successes and failures) it ran.
type madeSession struct {
	at       workload.Landing
	ops      int64
	opsKnown bool
}

// begin notes the sessions the worker began the step with.
func (m *madeSessions) begin(w workload.Worker) {
	l, ok := w.(workload.Lander)
	if !ok {
		return
	}
	for _, at := range l.Landings() {
		m.cur = append(m.cur, len(m.made))
		m.made = append(m.made, madeSession{at: at, opsKnown: true})
	}
	if len(m.cur) > 1 { // which session an operation used is the workload's to know
		for i := range m.made {
			m.made[i].opsKnown = false
		}
	}
}

// remade notes the sessions the worker's successful Reconnect made again: those it says
// (workload.Remaker), else a worker's only session, else those whose landing changed.
func (m *madeSessions) remade(w workload.Worker) {
	l, ok := w.(workload.Lander)
	if !ok {
		return
	}
	now := l.Landings()
	var again []int
	if r, ok := w.(workload.Remaker); ok {
		again = r.Remade()
	} else {
		for i, at := range now {
			if len(now) == 1 || i >= len(m.cur) || m.made[m.cur[i]].at != at {
				again = append(again, i)
			}
		}
	}
	for _, i := range again {
		if i < 0 || i >= len(now) {
			continue
		}
		for i >= len(m.cur) {
			m.cur = append(m.cur, -1)
		}
		m.cur[i] = len(m.made)
		m.made = append(m.made, madeSession{at: now[i], opsKnown: len(now) == 1})
	}
}

// did counts an operation of the window on the worker's session, when it has only one.
func (m *madeSessions) did() {
	if len(m.cur) == 1 && m.cur[0] >= 0 {
		m.made[m.cur[0]].ops++
	}
}

// sessions counts the step's sessions, every one its workers made, by node and role, with
// the operations run on each node when every session there ran alone on its worker.
func sessions(ms []madeSessions) []result.Sessions {
	type key struct {
		node       string
		inRecovery bool
	}
	byKey := map[key]*result.Sessions{}
	ops := map[key]int64{}
	known := map[key]bool{}
	for _, m := range ms {
		for _, s := range m.made {
			k := key{s.at.Node, s.at.InRecovery}
			e := byKey[k]
			if e == nil {
				e = &result.Sessions{Node: s.at.Node, InRecovery: s.at.InRecovery}
				byKey[k], known[k] = e, true
			}
			e.Count++
			known[k] = known[k] && s.opsKnown
			ops[k] += s.ops
		}
	}
	out := make([]result.Sessions, 0, len(byKey))
	for k, e := range byKey {
		if known[k] {
			n := ops[k]
			e.Ops = &n
		}
		out = append(out, *e)
	}
	// A node the sessions found in both roles (promoted in the step) is in two entries:
	// the standby's first, so that the order does not follow the map's.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].InRecovery && !out[j].InRecovery
	})
	if len(out) == 0 {
		return nil
	}
	return out
}
