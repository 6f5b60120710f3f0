package sample

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/hostmetrics"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/result"
)

// The agreement the host figures owe the kernel's own: CPU busy and device IOPS of one
// window, read from node_exporter, within this share of /proc's (local sampler's) figures.
const procAgreement = 0.05

// loadWindow runs the load the test controls for the window: fio reading a file of dir at a
// fixed rate with direct IO (so every read reaches the device), and a CPU spinner, until fio
// ends.
func loadWindow(t *testing.T, dir string, seconds int) {
	t.Helper()
	fio, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (scripts/install-deps.sh)")
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		x := 1.0
		for !stop.Load() {
			for i := 0; i < 1e5; i++ {
				x = math.Sqrt(x + float64(i))
			}
		}
		_ = x
	}()
	cmd := exec.Command(fio, "--name=agree", "--filename="+filepath.Join(dir, "agree.dat"), "--size=32M", "--direct=1",
		"--rw=randread", "--bs=4k", "--ioengine=psync", "--rate_iops=400", "--time_based", "--runtime="+strconv.Itoa(seconds), "--output-format=terse")
	out, err := cmd.CombinedOutput()
	stop.Store(true)
	<-done
	if err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
}

// within checks got against want, to a share of want.
func within(t *testing.T, what string, got, want, share float64) {
	t.Helper()
	if math.Abs(got-want) > share*math.Abs(want) {
		t.Errorf("%s: %.4g, want %.4g within %.0f%%", what, got, want, share*100)
	}
}

// In one window: the host's CPU busy and its device's IOPS from node_exporter agree with
// /proc's within 5%, and read through a Prometheus server they agree with the direct
// scrape within what the server's scrape times allow (its window is that of its scrapes, up
// to a scrape interval off at each end).
func TestRemoteHostAgreesWithProcAndPrometheus(t *testing.T) {
	t.Parallel()
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex.Addr)
	ctx := context.Background()
	direct, err := hostmetrics.NewExporter(ex.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	via, err := hostmetrics.NewPrometheus(ctx, prom.URL, "", ex.Addr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	local, err := NewOSStep(OSConfig{Paths: []string{dir}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	devs := local.Sampler().Devices()
	if len(devs) != 1 {
		t.Skipf("%s is on no single block device: %v", dir, devs)
	}
	dev := devs[0]
	remote, err := NewRemoteHostStep([]RemoteHost{{Node: "direct", Source: direct}, {Node: "prom", Source: via}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agree.dat"), make([]byte, 32<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	st := &result.Step{Window: result.Window{Start: time.Now()}}
	if err := local.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := remote.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	loadWindow(t, dir, 8)
	// The local sampler closes first, as it opened first: the remote one waits for the
	// server's first scrape after the close (up to a second), which the local window would
	// otherwise take in, idle.
	if err := local.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := remote.Stop(ctx, st); err != nil {
		t.Fatal(err)
	}
	c := st.Counters
	busy, iops := result.HostName("direct", result.HostCPUBusy), result.HostDiskName("direct", dev, result.DiskIOPS)
	procIOPS := c[result.DiskName(dev, result.DiskIOPS)]
	if procIOPS < 100 || c[result.OSCPUBusy] < 1/float64(2*runtime.NumCPU()) {
		t.Fatalf("the load did not show: %.0f IOPS, CPU busy %.2f", procIOPS, c[result.OSCPUBusy])
	}
	t.Logf("CPU busy: node_exporter %.4f, /proc %.4f; %s IOPS: node_exporter %.1f, /proc %.1f",
		c[busy], c[result.OSCPUBusy], dev, c[iops], procIOPS)
	within(t, "CPU busy from node_exporter against /proc", c[busy], c[result.OSCPUBusy], procAgreement)
	within(t, dev+" IOPS from node_exporter against /proc", c[iops], procIOPS, procAgreement)

	// Through Prometheus: the figures of its scrapes nearest the window's edges.
	d, p := remote.nodes[0], remote.nodes[1]
	off := math.Abs(p.first.At.Sub(d.first.At).Seconds()) + math.Abs(p.prev.At.Sub(d.prev.At).Seconds())
	w := d.prev.At.Sub(d.first.At).Seconds()
	for _, fig := range []struct{ direct, prom, series string }{
		{busy, result.HostName("prom", result.HostCPUBusy), busy},
		{iops, result.HostDiskName("prom", dev, result.DiskIOPS), iops},
	} {
		// The figure over a window moved by off seconds differs by at most off/W of the
		// largest per-second figure, twice (what left the window and what came in).
		peak := 0.0
		for _, v := range st.Series[fig.series].V {
			peak = max(peak, v)
		}
		allowed := 2*off/w*peak + 0.01*c[fig.direct]
		t.Logf("%s: Prometheus %.4f, direct %.4f (edges %.2f s apart in a %.1f s window: within %.4f)", fig.direct, c[fig.prom], c[fig.direct], off, w, allowed)
		if math.Abs(c[fig.prom]-c[fig.direct]) > allowed {
			t.Errorf("%s through Prometheus %.4f, direct %.4f: more apart than %.4f", fig.prom, c[fig.prom], c[fig.direct], allowed)
		}
	}
}
