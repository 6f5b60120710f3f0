package sample

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// OSStep runs an OSSampler beside each measured window (the runner's Sampler): every
// interval it adds a point to the step's "os.*", "disk.<dev>.*", "net.<iface>.*" and
// "psi.*" series, and at the end it puts the window's means in the step's counters.
type OSStep struct {
	s        *OSSampler
	interval time.Duration
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	err      error
	acc      map[string]*result.TimeSeries
	mem      proc.Meminfo
	// reads counts the window's readings by the sampling loop so far (Readings).
	reads atomic.Int64
}

// NewOSStep makes an OS sampler for the devices behind cfg.Paths; interval 0 means
// DefaultInterval.
func NewOSStep(cfg OSConfig, interval time.Duration) (*OSStep, error) {
	s, err := NewOS(cfg)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	o := &OSStep{s: s, interval: interval}
	o.mem, _ = s.cfg.Kernel.Meminfo() // unread, TotalBytes stays 0 and put leaves the figures out
	return o, nil
}

// Sampler gives access to the underlying sampler (its devices, what it skipped).
func (o *OSStep) Sampler() *OSSampler { return o.s }

// Start takes a reading at the window's opening and starts sampling.
func (o *OSStep) Start(ctx context.Context, st *result.Step) error {
	if o.cancel != nil {
		return errors.New("OS sampler already started")
	}
	if _, err := o.s.Sample(); err != nil { // sets the baseline at the window's start
		return err
	}
	o.err, o.acc = nil, map[string]*result.TimeSeries{}
	o.reads.Store(0)
	start := st.Window.Start
	if start.IsZero() {
		start = time.Now()
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.cancel = cancel
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.err = o.s.Run(runCtx, o.interval, func(s OSSample) { o.addSample(start, s); o.reads.Add(1) })
	}()
	return nil
}

// Readings is how many readings the window has taken so far, between Start and Stop: what a
// caller waits on to know that the sampler has seen the window.
func (o *OSStep) Readings() int { return int(o.reads.Load()) }

// Stop takes the last reading and writes the series and means into the step.
func (o *OSStep) Stop(ctx context.Context, st *result.Step) error {
	if o.cancel == nil {
		return errors.New("OS sampler not started")
	}
	o.cancel()
	o.wg.Wait()
	o.cancel = nil
	if o.err != nil {
		return o.err
	}
	start := st.Window.Start
	if start.IsZero() && len(o.acc) == 0 {
		start = time.Now()
	}
	last, err := o.s.Sample()
	if err != nil {
		return err
	}
	if last.Seconds > 0.05 { // a sliver after the last tick would only add noise
		o.addSample(start, last)
	}
	o.put(st)
	return nil
}

// put writes the window's series and their means, and the memory figures, into the step.
func (o *OSStep) put(st *result.Step) {
	if st.Series == nil {
		st.Series = map[string]result.TimeSeries{}
	}
	if st.Counters == nil {
		st.Counters = map[string]float64{}
	}
	for k, s := range o.acc {
		st.Series[k] = *s
		st.Counters[k] = weightedMean(s)
	}
	if o.mem.TotalBytes > 0 {
		st.Counters[result.OSMemTotal] = float64(o.mem.TotalBytes)
		st.Counters[result.OSMemAvailable] = float64(o.mem.AvailableBytes)
	}
}

// weightedMean is the mean of a series whose points each cover the time since the previous.
func weightedMean(s *result.TimeSeries) float64 {
	var sum, w, prev float64
	for i, t := range s.T {
		d := t - prev
		if i == 0 && t <= 0 {
			d = 1
		}
		sum += s.V[i] * d
		w += d
		prev = t
	}
	if w <= 0 {
		return 0
	}
	return sum / w
}

func (o *OSStep) add(name, unit string, start, at time.Time, v float64) {
	result.AddPoint(o.acc, name, unit, start, at, v)
}

func (o *OSStep) addSample(start time.Time, s OSSample) {
	at := s.At
	c := s.CPU
	for _, p := range []struct {
		n string
		v float64
	}{{result.OSCPUPrefix + "user", c.User}, {result.OSCPUPrefix + "system", c.System}, {result.OSCPUPrefix + "iowait", c.IOWait},
		{result.OSCPUIRQ, c.IRQ}, {result.OSCPUSteal, c.Steal}, {result.OSCPUPrefix + "idle", c.Idle}, {result.OSCPUBusy, c.Busy()}} {
		o.add(p.n, "share", start, at, p.v)
	}
	o.add("os.self.cores", "cores", start, at, s.SelfCores)
	o.add("os.self.share", "share", start, at, s.SelfShare)
	if d := s.SelfRunDelay; d != nil {
		o.add(result.OSSelfRunDelay, "threads", start, at, *d)
	}
	if b := s.LoadGenSet; b != nil {
		o.add(result.OSCPULoadGenSetBusy, "share", start, at, b.Set)
		o.add(result.OSCPUOtherSetBusy, "share", start, at, b.Other)
	}
	for _, d := range s.Disks {
		o.add(result.DiskName(d.Device, result.DiskIOPS), "1/s", start, at, d.IOPS())
		o.add(result.DiskName(d.Device, result.DiskReadMBps), "MB/s", start, at, d.ReadMBps)
		o.add(result.DiskName(d.Device, result.DiskWriteMBps), "MB/s", start, at, d.WriteMBps)
		o.add(result.DiskName(d.Device, result.DiskAwaitMs), "ms", start, at, d.AwaitMs)
		o.add(result.DiskName(d.Device, result.DiskQueue), "requests", start, at, d.AvgQueue)
		o.add(result.DiskName(d.Device, result.DiskUtil), "share", start, at, d.Util)
	}
	for _, n := range s.Net {
		pre := "net." + n.Iface + "."
		o.add(pre+"rx_mbps", "MB/s", start, at, n.RxMBps)
		o.add(pre+"tx_mbps", "MB/s", start, at, n.TxMBps)
	}
	for kind, p := range s.Pressure {
		o.add("psi."+kind+".some", "share", start, at, p.Some)
		o.add("psi."+kind+".full", "share", start, at, p.Full)
	}
}
