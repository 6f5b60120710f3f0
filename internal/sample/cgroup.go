package sample

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/result"
)

// HostGroup is one node's modelled host: its name and control group.
type HostGroup struct {
	Node  string
	Group *cgroup.Group
}

// HostStep samples every node's control group beside each measured window (the runner's
// Sampler): CPU used against the budget, throttled periods and time, memory and page cache,
// as "host.<node>.*" series, with the window's means (CPU and throttling over the whole
// window, memory at its end) and the budgets in the step's counters.
type HostStep struct {
	hosts    []HostGroup
	interval time.Duration
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	first    map[string]cgroup.Usage
	prev     map[string]cgroup.Usage
	acc      map[string]*result.TimeSeries
}

// NewHostStep samples these groups every interval (0: DefaultInterval).
func NewHostStep(hosts []HostGroup, interval time.Duration) (*HostStep, error) {
	if len(hosts) == 0 {
		return nil, errors.New("host sampler: no control groups")
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &HostStep{hosts: hosts, interval: interval}, nil
}

func (h *HostStep) readAll() (map[string]cgroup.Usage, error) {
	out := map[string]cgroup.Usage{}
	for _, g := range h.hosts {
		u, err := g.Group.Read()
		if err != nil {
			return nil, fmt.Errorf("host sampler: node %s: %w", g.Node, err)
		}
		out[g.Node] = u
	}
	return out, nil
}

// Start takes the window's first reading and samples until Stop.
func (h *HostStep) Start(ctx context.Context, st *result.Step) error {
	if h.cancel != nil {
		return errors.New("host sampler already started")
	}
	r, err := h.readAll()
	if err != nil {
		return err
	}
	start := st.Window.Start
	if start.IsZero() {
		start = time.Now()
	}
	h.err, h.first, h.prev, h.acc = nil, r, r, map[string]*result.TimeSeries{}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.cancel = cancel
	tickEvery(runCtx, &h.wg, h.interval, func() bool {
		if err := h.tick(start); err != nil {
			h.mu.Lock()
			h.err = err
			h.mu.Unlock()
			return false
		}
		return true
	})
	return nil
}

// tickEvery calls tick every interval in a goroutine counted in wg, until ctx is done or
// tick returns false.
func tickEvery(ctx context.Context, wg *sync.WaitGroup, interval time.Duration, tick func() bool) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !tick() {
					return
				}
			}
		}
	}()
}

func (h *HostStep) tick(start time.Time) error {
	cur, err := h.readAll()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.hosts {
		d := cgroup.Diff(h.prev[g.Node], cur[g.Node])
		h.addPoint(start, g, d, cur[g.Node].At)
	}
	h.prev = cur
	return nil
}

func (h *HostStep) add(name, unit string, start, at time.Time, v float64) {
	result.AddPoint(h.acc, name, unit, start, at, v)
}

func (h *HostStep) addPoint(start time.Time, g HostGroup, d cgroup.Between, at time.Time) {
	if d.Seconds <= 0 {
		return
	}
	n := g.Node
	h.add(result.HostName(n, result.HostCPUCores), "cores", start, at, d.Cores)
	if b := g.Group.Budget.CPUs; b > 0 {
		h.add(result.HostName(n, result.HostCPUOfBudget), "share", start, at, d.Cores/b)
	}
	if d.HasThrottle {
		h.add(result.HostName(n, result.HostThrottledShare), "share", start, at, d.ThrottledShare)
	}
	h.add(result.HostName(n, result.HostThrottledSec), "s/s", start, at, d.ThrottledTime/d.Seconds)
	h.add(result.HostName(n, result.HostMemoryBytes), "bytes", start, at, float64(d.Memory))
	h.add(result.HostName(n, result.HostPageCacheBytes), "bytes", start, at, float64(d.Cache))
	if d.HasIO {
		h.add(result.HostName(n, result.HostReadBPS), "B/s", start, at, d.ReadBPS)
		h.add(result.HostName(n, result.HostWriteBPS), "B/s", start, at, d.WriteBPS)
		h.add(result.HostName(n, result.HostReadIOPS), "ops/s", start, at, d.ReadIOPS)
		h.add(result.HostName(n, result.HostWriteIOPS), "ops/s", start, at, d.WriteIOPS)
	}
}

// hostIOCounters writes a window's IO figures and the group's IO limits into a step's counters.
func hostIOCounters(c map[string]float64, n string, b cgroup.Budget, d cgroup.Between) {
	if !d.HasIO {
		return
	}
	for _, f := range []struct {
		name, budget string
		v            float64
		limit        int64
	}{{result.HostReadBPS, result.HostReadBPSBudget, d.ReadBPS, b.ReadBPS},
		{result.HostWriteBPS, result.HostWriteBPSBudget, d.WriteBPS, b.WriteBPS},
		{result.HostReadIOPS, result.HostReadIOPSBudget, d.ReadIOPS, b.ReadIOPS},
		{result.HostWriteIOPS, result.HostWriteIOPSBudget, d.WriteIOPS, b.WriteIOPS}} {
		c[result.HostName(n, f.name)] = f.v
		if f.limit > 0 {
			c[result.HostName(n, f.budget)] = float64(f.limit)
		}
	}
}

// Stop takes the last reading and writes the series, the window's figures and the budgets.
func (h *HostStep) Stop(ctx context.Context, st *result.Step) error {
	if h.cancel == nil {
		return errors.New("host sampler not started")
	}
	h.cancel()
	h.wg.Wait()
	h.cancel = nil
	if h.err != nil {
		return h.err
	}
	last, err := h.readAll()
	if err != nil {
		return err
	}
	start := st.Window.Start
	if start.IsZero() {
		start = h.first[h.hosts[0].Node].At
	}
	if st.Series == nil {
		st.Series = map[string]result.TimeSeries{}
	}
	if st.Counters == nil {
		st.Counters = map[string]float64{}
	}
	for _, g := range h.hosts {
		if d := cgroup.Diff(h.prev[g.Node], last[g.Node]); d.Seconds > 0.05 {
			h.addPoint(start, g, d, last[g.Node].At)
		}
	}
	for k, s := range h.acc {
		st.Series[k] = *s
	}
	// The window's figures come from its first and last readings, not from the points' mean.
	for _, g := range h.hosts {
		n := g.Node
		d := cgroup.Diff(h.first[n], last[n])
		if d.Seconds <= 0 {
			continue
		}
		st.Counters[result.HostName(n, result.HostCPUCores)] = d.Cores
		if b := g.Group.Budget.CPUs; b > 0 {
			st.Counters[result.HostName(n, result.HostCPUBudget)] = b
			st.Counters[result.HostName(n, result.HostCPUOfBudget)] = d.Cores / b
		}
		if d.HasThrottle {
			st.Counters[result.HostName(n, result.HostThrottledShare)] = d.ThrottledShare
		}
		st.Counters[result.HostName(n, result.HostThrottledSec)] = d.ThrottledTime / d.Seconds
		st.Counters[result.HostName(n, result.HostMemoryBytes)] = float64(d.Memory)
		st.Counters[result.HostName(n, result.HostPageCacheBytes)] = float64(d.Cache)
		if m := g.Group.Budget.Memory; m > 0 {
			st.Counters[result.HostName(n, result.HostMemoryBudget)] = float64(m)
		}
		hostIOCounters(st.Counters, n, g.Group.Budget, d)
	}
	return nil
}
