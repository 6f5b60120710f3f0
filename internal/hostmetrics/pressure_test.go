package hostmetrics_test

import (
	"context"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// pressureWindow is how long a window of CPU pressure the tests measure: long against a
// scrape's own time (which bounds how far the exporter's and the test's reads may differ).
const pressureWindow = time.Second

// withPressure scrapes src between two reads of /proc/pressure/cpu's "some" total (µs): the
// exporter read the counter between them, so its value lies in [before, after].
func withPressure(t *testing.T, src hostmetrics.Source) (r hostmetrics.Reading, before, after uint64) {
	t.Helper()
	read := func() uint64 {
		p, err := proc.Host.Pressure("cpu")
		if err != nil {
			t.Skipf("no CPU pressure on this kernel: %v", err)
		}
		return p.Some
	}
	before = read()
	r, err := src.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after = read()
	return r, before, after
}

// cpuPressureOverWindow is the exporter's CPU pressure share over a window of
// pressureWindow and the bounds the kernel's own counter, read by the test around each
// scrape, puts on it: the exporter's counter grew between (second's before - first's
// after) and (second's after - first's before), over the readings' interval, capped at 1
// as the figure is.
//
// It logs, beside, the exporter's run queue (node_procs_running at the second scrape) and
// /proc/stat's procs_running read every 50 ms over the window: the instant a scrape sees
// against the window's mean.
func cpuPressureOverWindow(t *testing.T, src hostmetrics.Source) (share, lo, hi float64) {
	t.Helper()
	first, b1, a1 := withPressure(t, src)
	running, n := 0.0, 0
	tick := time.NewTicker(50 * time.Millisecond)
	for end := time.After(pressureWindow); n == 0 || end != nil; {
		select {
		case <-end:
			end = nil
		case <-tick.C:
			st, err := proc.Host.CPUStat()
			if err != nil {
				t.Fatal(err)
			}
			running, n = running+float64(st.Running), n+1
		}
	}
	tick.Stop()
	second, b2, a2 := withPressure(t, src)
	f := hostmetrics.Between("here", first, second)
	name := result.HostName("here", result.HostCPUPressure)
	t.Logf("run queue: exporter %v at the scrape, /proc/stat procs_running %.1f mean of %d reads over the window",
		f.Values[result.HostName("here", result.HostRunQueue)], running/float64(n), n)
	share, ok := f.Values[name]
	if !ok {
		t.Fatalf("CPU pressure absent: %s", f.Absent[name])
	}
	us := f.Seconds * 1e6
	// The exporter gives the µs total as seconds in a float64: exact to far below 1e-9.
	const eps = 1e-9
	lo = min(float64(b2-a1)/us, 1) - eps
	hi = min(float64(a2-b1)/us, 1) + eps
	return share, lo, hi
}

// The exporter's CPU pressure share is the kernel's: within the bounds the test's own reads
// of /proc/pressure/cpu around each scrape put on it; and with two busy loops per CPU (more
// runnable tasks than CPUs, so some task always waits) it is high enough for the analysis
// to call a busy host short of CPU.
func TestExporterCPUPressureIsTheKernels(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	src, err := hostmetrics.NewExporter(ex.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	share, lo, hi := cpuPressureOverWindow(t, src)
	t.Logf("before the loops: exporter %.4f, /proc/pressure/cpu [%.4f, %.4f]", share, lo, hi)
	if share < lo || share > hi {
		t.Errorf("exporter's CPU pressure %.4f outside the kernel's [%.4f, %.4f] over the same window", share, lo, hi)
	}

	for range 2 * runtime.NumCPU() {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	share, lo, hi = cpuPressureOverWindow(t, src)
	t.Logf("with %d busy loops on %d CPUs: exporter %.4f, /proc/pressure/cpu [%.4f, %.4f]", 2*runtime.NumCPU(), runtime.NumCPU(), share, lo, hi)
	if share < lo || share > hi {
		t.Errorf("under busy loops, exporter's CPU pressure %.4f outside the kernel's [%.4f, %.4f]", share, lo, hi)
	}
	if share < analyze.HostCPUPressureShare {
		t.Errorf("with two busy loops per CPU some task waited only %.4f of the window, under %v", share, analyze.HostCPUPressureShare)
	}
}
