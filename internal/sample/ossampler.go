package sample

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// DefaultInterval is how often samplers read their sources unless told otherwise.
const DefaultInterval = time.Second

// OSConfig says what the OS sampler watches.
type OSConfig struct {
	// Paths are the folders whose block devices are watched (data directories, test files).
	// A path on a file system with no block device is skipped and reported in OSSampler.Skipped.
	Paths []string
	// Devices are extra device names (as in /proc/diskstats) to watch.
	Devices []string
	// Kernel is where the kernel's files are read: the machine's (the zero FS) outside
	// tests, which point it at copies.
	Kernel proc.FS
}

// OSSample is one interval's view of the machine. Fields whose source is missing (no PSI on
// old kernels) stay nil.
type OSSample struct {
	At      time.Time   `json:"at"`      // end of the interval
	Seconds float64     `json:"seconds"` // length of the interval
	CPU     CPUShares   `json:"cpu"`
	NCPU    int         `json:"ncpu"`
	Disks   []DiskRates `json:"disks,omitempty"`
	Net     []NetRates  `json:"net,omitempty"`
	// Pressure: stall shares of cpu, io and memory (keys), when the kernel has PSI.
	Pressure map[string]PressureShares `json:"pressure,omitempty"`
	// SelfCores is the CPU this process used, in cores (1.0 = one core busy all interval);
	// SelfShare is the same as a share of all the machine's CPUs.
	SelfCores float64 `json:"self_cores"`
	SelfShare float64 `json:"self_share"`
	// LoadGenSet is how busy this process's affinity CPUs were against the others; nil
	// when the affinity is the whole machine.
	LoadGenSet *SetBusy `json:"loadgen_set,omitempty"`
	// SelfRunDelay is the time this process's threads waited for a CPU while runnable, per
	// second of the interval (0.5: half a thread's worth of waiting); nil without schedstat.
	SelfRunDelay *float64 `json:"self_run_delay,omitempty"`
}

// Disk returns the sample's rates of the named device.
func (s OSSample) Disk(name string) (DiskRates, bool) {
	for _, d := range s.Disks {
		if d.Device == name {
			return d, true
		}
	}
	return DiskRates{}, false
}

type osReading struct {
	at       time.Time
	cpu      proc.CPUTicks
	ncpu     int
	perCPU   map[int]proc.CPUTicks // only when the load generator's affinity leaves CPUs out
	runDelay time.Duration
	hasDelay bool
	disks    map[string]proc.DiskCounters
	net      map[string]proc.NetCounters
	pressure map[string]proc.PressureTotals
	self     time.Duration
}

// OSSampler reads the OS's counters and reports rates between successive readings.
// It is not safe for concurrent use; Run owns it while it runs.
type OSSampler struct {
	cfg     OSConfig
	devices []string
	// Skipped maps each configured path with no block device to the reason.
	Skipped map[string]string
	prev    osReading
	// affinity is this process's CPUs when they are not all the machine's.
	affinity []int
}

var pressureKinds = []string{"cpu", "io", "memory"}

// NewOS resolves the devices behind cfg.Paths and takes the first reading.
func NewOS(cfg OSConfig) (*OSSampler, error) {
	s := &OSSampler{cfg: cfg, Skipped: map[string]string{}}
	seen := map[string]bool{}
	for _, p := range cfg.Paths {
		dev, err := DeviceForPath(cfg.Kernel.Sys(), p)
		if errors.Is(err, ErrNoBlockDevice) {
			s.Skipped[p] = err.Error()
			continue
		}
		if err != nil {
			return nil, err
		}
		if !seen[dev] {
			seen[dev] = true
			s.devices = append(s.devices, dev)
		}
	}
	for _, d := range cfg.Devices {
		if !seen[d] {
			seen[d] = true
			s.devices = append(s.devices, d)
		}
	}
	sort.Strings(s.devices)
	if c := result.ReadCPUCap(); len(c.Affinity) > 0 && len(c.Affinity) < c.MachineCPUs {
		s.affinity = c.Affinity
	}
	r, err := s.read(time.Now())
	if err != nil {
		return nil, err
	}
	s.prev = r
	return s, nil
}

// Devices lists the block devices the sampler watches.
func (s *OSSampler) Devices() []string { return append([]string(nil), s.devices...) }

func (s *OSSampler) read(at time.Time) (osReading, error) {
	r := osReading{at: at, pressure: map[string]proc.PressureTotals{}}
	st, err := s.cfg.Kernel.CPUStat()
	if err != nil {
		return r, err
	}
	r.cpu, r.ncpu = st.All, len(st.CPUs)
	if len(s.affinity) > 0 {
		r.perCPU = st.CPUs
	}
	if r.disks, err = s.cfg.Kernel.Diskstats(); err != nil {
		return r, err
	}
	for _, d := range s.devices {
		if _, ok := r.disks[d]; !ok {
			return r, fmt.Errorf("device %s is not in /proc/diskstats", d)
		}
	}
	if r.net, err = s.cfg.Kernel.NetDev(); err != nil {
		return r, err
	}
	for _, k := range pressureKinds {
		p, err := s.cfg.Kernel.Pressure(k)
		var unread *fs.PathError
		if errors.As(err, &unread) {
			continue // no PSI on this kernel, or disabled: leave it out
		}
		if err != nil {
			return r, err
		}
		r.pressure[k] = p
	}
	if r.self, err = SelfCPU(); err != nil {
		return r, err
	}
	r.runDelay, r.hasDelay = s.cfg.Kernel.SelfRunDelay()
	return r, nil
}

// Sample reads the counters now and returns the rates since the previous reading.
func (s *OSSampler) Sample() (OSSample, error) {
	cur, err := s.read(time.Now())
	if err != nil {
		return OSSample{}, err
	}
	prev := s.prev
	s.prev = cur
	out := delta(prev, cur, s.devices)
	if sb, ok := setBusy(prev.perCPU, cur.perCPU, s.affinity); ok {
		out.LoadGenSet = &sb
	}
	if prev.hasDelay && cur.hasDelay && out.Seconds > 0 {
		d := max(0, (cur.runDelay-prev.runDelay).Seconds()/out.Seconds)
		out.SelfRunDelay = &d
	}
	return out, nil
}

func delta(prev, cur osReading, devices []string) OSSample {
	secs := cur.at.Sub(prev.at).Seconds()
	out := OSSample{At: cur.at, Seconds: secs, CPU: CPUDelta(prev.cpu, cur.cpu), NCPU: cur.ncpu}
	for _, d := range devices {
		out.Disks = append(out.Disks, DiskDelta(prev.disks[d], cur.disks[d], secs))
	}
	ifaces := make([]string, 0, len(cur.net))
	for name := range cur.net {
		ifaces = append(ifaces, name)
	}
	sort.Strings(ifaces)
	for _, name := range ifaces {
		if p, ok := prev.net[name]; ok {
			out.Net = append(out.Net, NetDelta(name, p, cur.net[name], secs))
		}
	}
	for k, c := range cur.pressure {
		if p, ok := prev.pressure[k]; ok {
			if out.Pressure == nil {
				out.Pressure = map[string]PressureShares{}
			}
			out.Pressure[k] = PressureDelta(p, c, secs)
		}
	}
	if secs > 0 {
		out.SelfCores = (cur.self - prev.self).Seconds() / secs
		if cur.ncpu > 0 {
			out.SelfShare = out.SelfCores / float64(cur.ncpu)
		}
	}
	return out
}

// Run samples every interval until ctx ends, calling emit with each sample from this
// goroutine. It returns the first read error, or nil when ctx ends.
func (s *OSSampler) Run(ctx context.Context, interval time.Duration, emit func(OSSample)) error {
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			smp, err := s.Sample()
			if err != nil {
				return err
			}
			emit(smp)
		}
	}
}
