package diskio

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/agbench/agbench/internal/sample"
)

// osWindow reads the kernel's counters at the edges of a step's window through
// internal/sample: the device behind the file (/proc/diskstats), IO pressure, machine CPU,
// and the tester's own rusage.
type osWindow struct {
	s     *sample.OSSampler
	err   error
	ru    unix.Rusage
	at    time.Time
	smp   sample.OSSample
	ruEnd unix.Rusage
}

func newOSWindow(path string, o StepOptions) *osWindow {
	w := &osWindow{}
	w.s, w.err = sample.NewOS(sample.OSConfig{Paths: []string{path}, Kernel: o.Kernel})
	return w
}

// open marks the start of the window.
func (w *osWindow) open() {
	unix.Getrusage(unix.RUSAGE_SELF, &w.ru)
	w.at = time.Now()
	if w.err == nil {
		_, w.err = w.s.Sample()
	}
}

// close marks the end of the window.
func (w *osWindow) close() {
	unix.Getrusage(unix.RUSAGE_SELF, &w.ruEnd)
	if w.err == nil {
		w.smp, w.err = w.s.Sample()
	}
}

func tvSec(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// views turns the window's two readings into the step's device, pressure and CPU views;
// the notes say what could not be read.
func (w *osWindow) views(ios int64) (*DeviceView, *PressureView, CPUView, []string) {
	var notes []string
	var cv CPUView
	el := time.Since(w.at).Seconds()
	if w.err == nil {
		el = w.smp.Seconds
	}
	if el <= 0 {
		el = 1e-9
	}
	cv.TesterUserS = tvSec(w.ruEnd.Utime) - tvSec(w.ru.Utime)
	cv.TesterSysS = tvSec(w.ruEnd.Stime) - tvSec(w.ru.Stime)
	cv.TesterPct = (cv.TesterUserS + cv.TesterSysS) / el * 100
	if ios > 0 {
		cv.TesterUsPerIO = (cv.TesterUserS + cv.TesterSysS) / float64(ios) * 1e6
	}
	if w.err != nil {
		return nil, nil, cv, []string{"no OS view: " + w.err.Error()}
	}
	s := w.smp
	c := s.CPU
	cv.MachineUserPct, cv.MachineSysPct = c.User*100, (c.System+c.IRQ)*100
	cv.MachineIOWait, cv.MachineStealPct, cv.MachineIdlePct, cv.Cores = c.IOWait*100, c.Steal*100, c.Idle*100, s.NCPU
	var dv *DeviceView
	if len(s.Disks) > 0 {
		d := s.Disks[0]
		dv = &DeviceView{Name: d.Device, ReadIOPS: d.ReadIOPS, WriteIOPS: d.WriteIOPS, ReadMBps: d.ReadMBps, WriteMBps: d.WriteMBps,
			ReadAwaitMs: d.ReadAwait, WriteAwait: d.WriteAwait, AvgQueue: d.AvgQueue, UtilPct: d.Util * 100,
			Bytes: (d.ReadMBps + d.WriteMBps) * 1e6 * s.Seconds}
	} else {
		for p, why := range w.s.Skipped {
			notes = append(notes, "no device view for "+p+": "+why)
		}
	}
	var pv *PressureView
	if p, ok := s.Pressure["io"]; ok {
		pv = &PressureView{SomePct: p.Some * 100, FullPct: p.Full * 100}
	}
	return dv, pv, cv, notes
}
