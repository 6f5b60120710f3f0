package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload"
)

// Backoff between attempts to make a lost session again: the first attempt is at once,
// then the waits double from ReconnectMinWait up to ReconnectMaxWait, for as long as the
// step runs. A server that restarts in a second is back in a few attempts; one that is
// down for long is asked once a second, not flooded.
const (
	ReconnectMinWait = 50 * time.Millisecond
	ReconnectMaxWait = time.Second
	// DefaultReconnectFor is how long a VU of a step of iterations, which has no end in
	// time, keeps trying before it gives up (see StepSpec.ReconnectFor).
	DefaultReconnectFor = time.Minute
)

// ErrSessionsLost ends a step some of whose VUs gave up making their lost session again.
var ErrSessionsLost = errors.New("lost sessions not made again")

// reconnectFor is how long a VU keeps trying to make its lost session again; 0 means
// until the step ends.
func (s StepSpec) reconnectFor() time.Duration {
	if s.ReconnectFor > 0 {
		return s.ReconnectFor
	}
	if s.Iterations > 0 {
		return DefaultReconnectFor
	}
	return 0
}

// Backoff is a bounded exponential backoff: Next returns Min, then twice the last wait,
// never more than Max.
type Backoff struct {
	Min, Max time.Duration
	last     time.Duration
}

// Next returns the wait before the next attempt.
func (b *Backoff) Next() time.Duration {
	switch {
	case b.last <= 0:
		b.last = b.Min
	case b.last < b.Max:
		b.last *= 2
	}
	b.last = min(b.last, b.Max)
	return b.last
}

// sleep waits d, or less when ctx ends; it reports whether it waited the whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// outages counts the sessions a step's workers lost and made again. An outage counts in
// the window when the session was lost in it, or was still being made again when it opened;
// its time without a session counts from the window's start at the earliest.
type outages struct {
	opened      atomic.Bool
	windowStart atomic.Int64 // unix nanoseconds
	gaveUp      atomic.Int64
	mu          sync.Mutex
	r           result.Reconnects
}

// open notes the window's start and forgets the outages of the ramp-up.
func (o *outages) open(at time.Time) {
	o.mu.Lock()
	o.r = result.Reconnects{}
	o.mu.Unlock()
	o.windowStart.Store(at.UnixNano())
	o.opened.Store(true)
}

// inWindow reports whether the window is open, and clips t to its start.
func (o *outages) inWindow(t time.Time) (time.Time, bool) {
	if !o.opened.Load() {
		return t, false
	}
	if ws := time.Unix(0, o.windowStart.Load()); t.Before(ws) {
		return ws, true
	}
	return t, true
}

// failed counts a failed attempt of an outage.
func (o *outages) failed(err error) {
	if !o.opened.Load() {
		return
	}
	o.mu.Lock()
	o.r.Failed++
	o.r.LastError = err.Error()
	o.mu.Unlock()
}

// ended counts an outage from lost to end, restored or not (the step ended first).
func (o *outages) ended(lost, end time.Time, restored bool) {
	from, ok := o.inWindow(lost)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.r.Lost++
	if o.r.First.IsZero() || from.Before(o.r.First) {
		o.r.First = from
	}
	if restored {
		o.r.Count++
		if end.After(o.r.Last) {
			o.r.Last = end
		}
	} else {
		o.r.Unrestored++
	}
	if d := end.Sub(from).Seconds(); d > 0 {
		o.r.DownSeconds += d
		o.r.MaxDownSeconds = max(o.r.MaxDownSeconds, d)
		if !restored {
			o.r.UnrestoredSeconds += d
		}
	}
}

// result returns the window's figures.
func (o *outages) result() *result.Reconnects {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.r
	return &r
}

// reconnect makes a lost session again: at once, then after each failure a wait from the
// backoff, until it succeeds, ctx (the step) ends, or for (when above 0) has passed, when
// the VU gives up. It reports whether the session is back.
func (o *outages) reconnect(ctx context.Context, w workload.Reconnector, limit time.Duration) bool {
	lost := time.Now()
	tryCtx := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		tryCtx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	b := Backoff{Min: ReconnectMinWait, Max: ReconnectMaxWait}
	for {
		err := w.Reconnect(tryCtx)
		if err == nil {
			o.ended(lost, time.Now(), true)
			return true
		}
		if tryCtx.Err() == nil {
			o.failed(err)
		}
		if tryCtx.Err() != nil || !sleep(tryCtx, b.Next()) {
			o.ended(lost, time.Now(), false)
			if ctx.Err() == nil {
				o.gaveUp.Add(1)
			}
			return false
		}
	}
}

// waitServer runs a step's set-up f (making its workers, the workload's before-step hook)
// again while it fails with a Transient error, the server restarting or failing over
// between steps, with the reconnect backoff for up to limit (DefaultReconnectFor when 0).
// It returns f's last error and, when it had to wait, a note for the step's warnings.
func waitServer(ctx context.Context, limit time.Duration, f func() error) (note string, err error) {
	if limit <= 0 {
		limit = DefaultReconnectFor
	}
	start := time.Now()
	b := Backoff{Min: ReconnectMinWait, Max: ReconnectMaxWait}
	var first error
	for failed := 0; ; failed++ {
		err = f()
		if err == nil || !Transient(err) || time.Since(start) >= limit || !sleep(ctx, b.Next()) {
			if first != nil {
				msg, _, _ := strings.Cut(first.Error(), "\n") // the first VU's of a joined error
				note = fmt.Sprintf("set-up waited %.1fs for the server (%d failed attempts; first: %s)", time.Since(start).Seconds(), failed, msg)
			}
			return note, err
		}
		if first == nil {
			first = err
		}
	}
}
