package sample

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/result"
)

// RemoteHost is a node whose host figures are read from its node_exporter (directly or
// through a Prometheus server).
type RemoteHost struct {
	Node   string
	Source hostmetrics.Source
}

// RemoteHostStep reads every node's host beside each measured window (the runner's
// Sampler): at the window's open, every interval between and at its close. Each interval
// between two readings of a node adds a point to its "host.<node>.*" series; the step's
// counters get the window's figures, from the readings at its open and its close. What
// could not be read is absent, with the reason in the step's hosts section
// (result.HostsStep), never 0.
type RemoteHostStep struct {
	hosts    []RemoteHost
	interval time.Duration
	timeout  time.Duration
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	start    time.Time
	nodes    []*remoteNode
	acc      map[string]*result.TimeSeries
	closed   *closeReadings // taken by CloseWindow, used by Stop
}

// remoteNode is one node's readings of a window.
type remoteNode struct {
	host        RemoteHost
	first, prev *hostmetrics.Reading
	scrapes     int
	failed      int
	firstErr    string
	openErr     error
}

// RemoteReadTimeout is how long one read of a host may take before it fails. A busy host
// (or a busy load generator) answers late, it is not down: a read slower than the interval
// only delays the next one, and the series' point then spans the longer interval; a host
// that does not answer at all fails its read within this time.
const RemoteReadTimeout = 5 * time.Second

// NewRemoteHostStep reads these hosts every interval (0: DefaultInterval); a read fails
// after the longer of RemoteReadTimeout and the interval.
func NewRemoteHostStep(hosts []RemoteHost, interval time.Duration) (*RemoteHostStep, error) {
	if len(hosts) == 0 {
		return nil, errors.New("remote host sampler: no hosts")
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &RemoteHostStep{hosts: hosts, interval: interval, timeout: max(interval, RemoteReadTimeout)}, nil
}

// read takes one reading of every node at once.
func (h *RemoteHostStep) read(ctx context.Context) ([]hostmetrics.Reading, []error) {
	return h.each(func(src hostmetrics.Source) (hostmetrics.Reading, error) {
		c, cancel := context.WithTimeout(ctx, h.timeout)
		defer cancel()
		return src.Read(c)
	})
}

// readClose takes every node's reading at the window's close, end: one read now, or, of a
// source whose readings are another's (a Prometheus server's scrapes), the first taken at
// or after end, which the source waits for (bounded by itself, and by ctx): its latest
// before end would leave the window's last moments out of its figures.
func (h *RemoteHostStep) readClose(ctx context.Context, end time.Time) ([]hostmetrics.Reading, []error) {
	return h.each(func(src hostmetrics.Source) (hostmetrics.Reading, error) {
		if a, ok := src.(hostmetrics.AfterReader); ok {
			return a.ReadAfter(ctx, end)
		}
		c, cancel := context.WithTimeout(ctx, h.timeout)
		defer cancel()
		return src.Read(c)
	})
}

// each calls read with every node's source at once.
func (h *RemoteHostStep) each(read func(hostmetrics.Source) (hostmetrics.Reading, error)) ([]hostmetrics.Reading, []error) {
	rs, errs := make([]hostmetrics.Reading, len(h.hosts)), make([]error, len(h.hosts))
	var wg sync.WaitGroup
	for i, n := range h.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i], errs[i] = read(n.Source)
		}()
	}
	wg.Wait()
	return rs, errs
}

// Start takes the window's first readings and reads until Stop.
func (h *RemoteHostStep) Start(ctx context.Context, st *result.Step) error {
	if h.cancel != nil {
		return errors.New("remote host sampler already started")
	}
	h.start = st.Window.Start
	if h.start.IsZero() {
		h.start = time.Now()
	}
	h.acc, h.nodes = map[string]*result.TimeSeries{}, make([]*remoteNode, len(h.hosts))
	for i, n := range h.hosts {
		h.nodes[i] = &remoteNode{host: n}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.cancel = cancel
	rs, errs := h.read(runCtx)
	for i, n := range h.nodes {
		h.took(n, rs[i], errs[i])
		if n.prev != nil {
			n.first = n.prev
		} else {
			n.openErr = errs[i]
		}
	}
	tickEvery(runCtx, &h.wg, h.interval, func() bool {
		rs, errs := h.read(runCtx)
		if runCtx.Err() != nil {
			return false // a read cut by Stop is no failure of the host
		}
		for i, n := range h.nodes {
			h.took(n, rs[i], errs[i])
		}
		return true
	})
	return nil
}

// took counts one reading of a node and adds the interval since its previous one to the
// series.
func (h *RemoteHostStep) took(n *remoteNode, r hostmetrics.Reading, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n.scrapes++
	if err != nil {
		n.failed++
		if n.firstErr == "" {
			n.firstErr = fmt.Sprintf("at %.1f s of the window: %v", time.Since(h.start).Seconds(), err)
		}
		return
	}
	if n.prev != nil {
		f := hostmetrics.Between(n.host.Node, *n.prev, r)
		if f.Seconds > 0 && !r.At.Before(h.start) {
			for name, v := range f.Values {
				result.AddPoint(h.acc, name, f.Units[name], h.start, r.At, v)
			}
		}
	}
	n.prev = &r
}

// CloseWindow stops the reads between and takes the readings at the window's close, end
// (now when zero), for Stop; it does nothing when the sampler is not running or has them.
func (h *RemoteHostStep) CloseWindow(ctx context.Context, end time.Time) {
	if h.cancel == nil || h.closed != nil {
		return
	}
	h.cancel()
	h.wg.Wait()
	if end.IsZero() {
		end = time.Now()
	}
	rs, errs := h.readClose(context.WithoutCancel(ctx), end)
	h.closed = &closeReadings{rs: rs, errs: errs}
}

// closeReadings are the readings CloseWindow took at the window's close.
type closeReadings struct {
	rs   []hostmetrics.Reading
	errs []error
}

// Stop takes the readings at the window's close, unless CloseWindow took them as it
// closed, and writes the series, the window's figures and the hosts section into the step.
func (h *RemoteHostStep) Stop(ctx context.Context, st *result.Step) error {
	if h.cancel == nil {
		return errors.New("remote host sampler not started")
	}
	h.CloseWindow(ctx, st.Window.End)
	rs, errs := h.closed.rs, h.closed.errs
	h.cancel, h.closed = nil, nil
	if st.Series == nil {
		st.Series = map[string]result.TimeSeries{}
	}
	if st.Counters == nil {
		st.Counters = map[string]float64{}
	}
	sec := result.HostsStep{Nodes: map[string]result.HostSource{}}
	for i, n := range h.nodes {
		var last *hostmetrics.Reading
		if errs[i] == nil {
			last = &rs[i]
		}
		h.took(n, rs[i], errs[i])
		src := h.window(st, n, last, errs[i])
		sec.Nodes[n.host.Node] = src
		if n.failed > 0 {
			st.Warnings = append(st.Warnings, fmt.Sprintf("host figures of %s: %d of %d reads of %s failed, the first %s",
				n.host.Node, n.failed, n.scrapes, n.host.Source, n.firstErr))
		}
	}
	for k, s := range h.acc {
		st.Series[k] = *s
	}
	return st.SetExtra(result.ExtraHosts, sec)
}

// window writes a node's window figures, from its readings at the open and the close, into
// the step's counters, and says how they were read and why those absent are.
func (h *RemoteHostStep) window(st *result.Step, n *remoteNode, last *hostmetrics.Reading, closeErr error) result.HostSource {
	src := result.HostSource{Source: n.host.Source.String(), Scrapes: n.scrapes, Failed: n.failed}
	switch {
	case n.failed == n.scrapes:
		src.Absent = fmt.Sprintf("every read of %s failed, the first %s", n.host.Source, n.firstErr)
		return src
	case n.first == nil:
		src.Absent = fmt.Sprintf("the read at the window's open failed (%v): the window's figures need it", n.openErr)
		return src
	case last == nil:
		src.Absent = fmt.Sprintf("the read at the window's close failed (%v): the window's figures need it", closeErr)
		return src
	}
	src.Span = &result.Window{Start: n.first.At, End: last.At}
	src.Nodename, src.Machine = last.Nodename, last.Machine
	if why := tooShort(st.Window, *src.Span); why != "" {
		src.Absent = why
		return src
	}
	f := hostmetrics.Between(n.host.Node, *n.first, *last)
	for name, v := range f.Values {
		st.Counters[name] = v
	}
	for name, why := range f.Absent {
		if _, fig, ok := result.ParseHostName(name); ok {
			if src.Missing == nil {
				src.Missing = map[string]string{}
			}
			src.Missing[fig] = why
		}
	}
	return src
}

// tooShort says why a window's figures made of readings taken over span would be more of
// the time outside the window than of the window itself: a window shorter than, or near,
// the scrape interval of a Prometheus server, whose scrapes nearest its open and its close
// lie up to an interval before and after it. "" when they are mostly the window's (always
// for an exporter read directly at the open and the close).
func tooShort(w, span result.Window) string {
	if w.Start.IsZero() || w.End.IsZero() || span.Seconds() <= 2*w.Seconds() {
		return ""
	}
	return fmt.Sprintf("the window (%.2f s) is too short for how the host was read: its readings nearest the open and the close are %.2f s before and %.2f s after it, so its figures would be more of the time outside the window than in",
		w.Seconds(), w.Start.Sub(span.Start).Seconds(), span.End.Sub(w.End).Seconds())
}
