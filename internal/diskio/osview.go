package diskio

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// osSnap is what the kernel says at one instant: the device's counters, IO pressure,
// machine CPU ticks and the tester's own rusage.
type osSnap struct {
	at     time.Time
	disk   DiskStat
	diskOK bool
	psi    Pressure
	psiOK  bool
	cpu    CPUStat
	cpuOK  bool
	ru     unix.Rusage
}

func takeSnap(procRoot string, dev *Device) osSnap {
	s := osSnap{at: time.Now()}
	unix.Getrusage(unix.RUSAGE_SELF, &s.ru)
	if dev != nil {
		if b, err := os.ReadFile(filepath.Join(procRoot, "diskstats")); err == nil {
			s.disk, s.diskOK = ParseDiskstats(b)[dev.Name]
		}
	}
	if b, err := os.ReadFile(filepath.Join(procRoot, "pressure", "io")); err == nil {
		if p, err := ParsePressure(b); err == nil {
			s.psi, s.psiOK = p, true
		}
	}
	if b, err := os.ReadFile(filepath.Join(procRoot, "stat")); err == nil {
		if c, err := ParseCPUStat(b); err == nil {
			s.cpu, s.cpuOK = c, true
		}
	}
	return s
}

// DeviceView is the block device's own account of a step (iostat -x's columns).
type DeviceView struct {
	Name        string  `json:"name"`
	ReadIOPS    float64 `json:"read_iops"`
	WriteIOPS   float64 `json:"write_iops"`
	ReadMBps    float64 `json:"read_mbps"`
	WriteMBps   float64 `json:"write_mbps"`
	ReadBytes   uint64  `json:"read_bytes"`
	WriteBytes  uint64  `json:"write_bytes"`
	ReadAwaitMs float64 `json:"read_await_ms"`
	WriteAwait  float64 `json:"write_await_ms"`
	AvgQueue    float64 `json:"avg_queue"`
	UtilPct     float64 `json:"util_pct"`
}

// PressureView is the share of the window in which some (or all) tasks stalled on IO.
type PressureView struct {
	SomePct float64 `json:"some_pct"`
	FullPct float64 `json:"full_pct"`
}

// CPUView is CPU use over the measured window: the tester's (in % of one CPU and per IO)
// and the machine's (in % of all CPUs).
type CPUView struct {
	TesterUserS     float64 `json:"tester_user_s"`
	TesterSysS      float64 `json:"tester_sys_s"`
	TesterPct       float64 `json:"tester_pct_of_one_cpu"`
	TesterUsPerIO   float64 `json:"tester_us_per_io"`
	MachineUserPct  float64 `json:"machine_user_pct"`
	MachineSysPct   float64 `json:"machine_sys_pct"`
	MachineIOWait   float64 `json:"machine_iowait_pct"`
	MachineStealPct float64 `json:"machine_steal_pct"`
	MachineIdlePct  float64 `json:"machine_idle_pct"`
}

func tvSec(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

func diffOS(a, b osSnap, ios int64, dev *Device) (*DeviceView, *PressureView, CPUView) {
	el := b.at.Sub(a.at).Seconds()
	if el <= 0 {
		el = 1e-9
	}
	var dv *DeviceView
	if a.diskOK && b.diskOK {
		d := func(x, y uint64) float64 { return float64(y - x) }
		rio, wio := d(a.disk.ReadIOs, b.disk.ReadIOs), d(a.disk.WriteIOs, b.disk.WriteIOs)
		dv = &DeviceView{Name: dev.Name,
			ReadIOPS: rio / el, WriteIOPS: wio / el,
			ReadBytes:  (b.disk.ReadSectors - a.disk.ReadSectors) * 512,
			WriteBytes: (b.disk.WriteSectors - a.disk.WriteSectors) * 512,
			AvgQueue:   d(a.disk.TimeInQueue, b.disk.TimeInQueue) / 1000 / el,
			UtilPct:    min(100, d(a.disk.IOTicks, b.disk.IOTicks)/1000/el*100),
		}
		dv.ReadMBps = float64(dv.ReadBytes) / 1e6 / el
		dv.WriteMBps = float64(dv.WriteBytes) / 1e6 / el
		if rio > 0 {
			dv.ReadAwaitMs = d(a.disk.ReadTicks, b.disk.ReadTicks) / rio
		}
		if wio > 0 {
			dv.WriteAwait = d(a.disk.WriteTicks, b.disk.WriteTicks) / wio
		}
	}
	var pv *PressureView
	if a.psiOK && b.psiOK {
		pv = &PressureView{SomePct: float64(b.psi.SomeTotal-a.psi.SomeTotal) / 1e6 / el * 100}
		if a.psi.HasFull && b.psi.HasFull {
			pv.FullPct = float64(b.psi.FullTotal-a.psi.FullTotal) / 1e6 / el * 100
		}
	}
	var cv CPUView
	cv.TesterUserS = tvSec(b.ru.Utime) - tvSec(a.ru.Utime)
	cv.TesterSysS = tvSec(b.ru.Stime) - tvSec(a.ru.Stime)
	cv.TesterPct = (cv.TesterUserS + cv.TesterSysS) / el * 100
	if ios > 0 {
		cv.TesterUsPerIO = (cv.TesterUserS + cv.TesterSysS) / float64(ios) * 1e6
	}
	if a.cpuOK && b.cpuOK {
		tot := float64(b.cpu.Total() - a.cpu.Total())
		if tot > 0 {
			pct := func(x, y uint64) float64 { return float64(y-x) / tot * 100 }
			cv.MachineUserPct = pct(a.cpu.User+a.cpu.Nice, b.cpu.User+b.cpu.Nice)
			cv.MachineSysPct = pct(a.cpu.System+a.cpu.IRQ+a.cpu.SoftIRQ, b.cpu.System+b.cpu.IRQ+b.cpu.SoftIRQ)
			cv.MachineIOWait = pct(a.cpu.IOWait, b.cpu.IOWait)
			cv.MachineStealPct = pct(a.cpu.Steal, b.cpu.Steal)
			cv.MachineIdlePct = pct(a.cpu.Idle, b.cpu.Idle)
		}
	}
	return dv, pv, cv
}
