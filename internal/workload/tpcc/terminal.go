package tpcc

import (
	"time"

	"github.com/agbench/agbench/internal/workload"
)

// An emulated terminal of clause 5.2.5: its operator keys a transaction's input screen (the
// keying time of clause 5.2.5.7), submits it, waits for the output screen (the response
// time), reads it (the think time, clause 5.2.5.4) and keys the next transaction the deck
// deals (clause 5.2.4.2). A terminal is no goroutine: while it keys and thinks it is a timer,
// and when it submits, its request waits in the monitor's queue for a session (monitor.go),
// so that ten thousand terminals cost ten thousand timers and decks, not threads or backends.
type emulated struct {
	in   Terminal
	deck *Deck
	mon  *monitor
	// ready is the queue of the step the terminal was made for: a timer that fires as the
	// step ends puts its request in a queue no later step reads.
	ready chan *emulated
	// kind and due are the transaction the terminal keys and when it submits it; written
	// before the timer is set, read by whoever serves the request.
	kind  Kind
	due   time.Time
	timer *time.Timer
}

// terminalStream is the random stream of terminal i in the monitor's start-th step, apart
// from the load's (stream) and the VUs' streams.
func terminalStream(start, i int) uint64 { return 1<<62 | uint64(start)<<32 | uint64(i) }

// newEmulated makes terminal i of the run's over its warehouses: its home warehouse and
// district spread evenly as the VUs' are (Home: ten terminals per warehouse put one in each
// district, and a segment's terminals stay on its warehouses), its random stream and deck.
func (m *monitor) newEmulated(i int) *emulated {
	w := m.w
	wh := w.meta.Warehouses
	g := NewRand(w.Seed, terminalStream(m.starts, i))
	homeW, homeD := Home(workload.VU{ID: i, Of: w.Terminals, Segment: m.seg}, wh)
	return &emulated{mon: m, ready: m.ready, deck: NewDeck(g), in: Terminal{G: g, C: w.run, Warehouses: wh,
		HomeW: homeW, HomeD: homeD, AllWarehouses: w.AllWarehouses}}
}

// begin deals the terminal's first transaction and sets it to submit at a uniform point of
// a keying and think time from now, so that the terminals' cycles are spread from the start
// rather than all keying at once.
func (t *emulated) begin(now time.Time) {
	t.kind = t.deck.Next()
	cycle := t.mon.scaled(KeyingTime(t.kind) + t.in.ThinkTime(t.kind))
	d := time.Duration(float64(cycle) * float64(t.in.G.Int(0, 1<<30)) / float64(1<<30))
	t.due = now.Add(d)
	t.timer = time.AfterFunc(d, t.submit)
}

// submit puts the terminal's request in the monitor's queue (the timer's function).
func (t *emulated) submit() { t.ready <- t }

// answered takes the answer to a transaction of kind k at now: the operator thinks, then
// keys the next transaction the deck deals, and submits it.
func (t *emulated) answered(k Kind, now time.Time) {
	think := t.mon.scaled(t.in.ThinkTime(k))
	t.mon.thought(k, think)
	t.kind = t.deck.Next()
	d := think + t.mon.scaled(KeyingTime(t.kind))
	t.due = now.Add(d)
	t.timer.Reset(d)
}

// scaled is a keying or think time multiplied by the run's ThinkScale.
func (m *monitor) scaled(d time.Duration) time.Duration {
	if s := m.w.ThinkScale; s > 0 && s != 1 {
		return time.Duration(float64(d) * s)
	}
	return d
}
