package sample

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// The samplers' figures and section, written here, reach internal/analyze through a result
// file: a figure renamed or a JSON name changed on either side fails this test instead of
// leaving part of the analysis silently empty. No server: the samplers' last steps are fed
// readings by hand.
func TestSamplerFiguresReachTheAnalysis(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	st := &result.Step{Index: 0, VUs: 4, Window: result.Window{Start: t0, End: t0.Add(10 * time.Second)},
		Ops: map[string]*result.Op{"q": {Count: 1000}}, Complete: true}

	o := &OSStep{acc: map[string]*result.TimeSeries{}, mem: proc.Meminfo{TotalBytes: 8 << 30, AvailableBytes: 6 << 30}}
	o.addSample(t0, OSSample{At: t0.Add(10 * time.Second), Seconds: 10,
		CPU:   CPUShares{User: 0.5, System: 0.2, Steal: 0.05, Idle: 0.25},
		Disks: []DiskRates{{Device: "vdb", ReadIOPS: 300, WriteIOPS: 100, ReadMBps: 12, WriteMBps: 5, AwaitMs: 2, AvgQueue: 1.5, Util: 0.9}}})
	o.put(st)

	n := &pgNode{info: NodeInfo{Name: "db.1", VersionNum: 170002, SharedBuffersBytes: 128 << 20, DatabaseBytes: 3 << 30}}
	n.reset(t0)
	n.begin(pgCounters{at: t0, io: &ioCounters{}, standbys: map[string]standbyState{"s.1": {replayLag: ptr(0.5)}, "s.2": {behind: 1e6}}})
	n.events[[3]string{"Lock", "tuple", WaitLock}] = 30
	n.classTotal[WaitLock], n.classTotal[WaitCPU], n.waitSamples = 30, 10, 10
	n.record(pgCounters{at: t0.Add(10 * time.Second), commits: 1000, lsn: 50e6,
		io:       &ioCounters{readBytes: 100e6, writeBytes: 20e6},
		standbys: map[string]standbyState{"s.1": {replayLag: ptr(2.5), replayLSN: 40e6}, "s.2": {replayLSN: 40e6, behind: 10e6}}})
	p := &PG{nodes: []*pgNode{n}, stop: make(chan struct{})}
	if err := p.Stop(context.Background(), st); err != nil {
		t.Fatal(err)
	}

	r := &result.Result{Schema: result.SchemaVersion, Meta: result.Meta{Command: "stress"}, Steps: []result.Step{*st}, Complete: true}
	dir := t.TempDir()
	if _, err := result.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := analyze.FromResult(back, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := run.Variants[0].Input
	e, f := in.Evidence[0], in.Facts
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("lock waits", e.Waits.Lock, 3)
	near("CPU waits", e.Waits.CPU, 1)
	if len(e.TopWaits) != 1 || e.TopWaits[0].Event != "tuple" || e.TopWaits[0].Class != WaitLock {
		t.Errorf("top waits %+v", e.TopWaits)
	}
	near("CPU busy", e.CPUBusy, 0.7)
	near("steal", e.Steal, 0.05)
	if e.Device.Name != "vdb" {
		t.Errorf("device %+v", e.Device)
	}
	near("device IOPS", e.Device.IOPS, 400)
	near("device util", e.Device.Util, 0.9)
	near("device await", e.Device.AwaitMs, 2)
	near("device queue", e.Device.Queue, 1.5)
	near("database IO (pg_stat_io and WAL)", e.ExpectedDeviceMBps, 10+2+5)
	if e.Standby != "s_1" {
		t.Errorf("standby %q", e.Standby)
	}
	near("replay lag", e.ReplayLagSec, 2.5)
	near("lag growth", e.LagGrowth, 0.2)
	// s.2's lag times were NULL while it was behind (not measured): absent, not a lag of 0 s;
	// its bytes behind are there.
	for _, fig := range []string{result.PGReplayLagSeconds, result.PGReplayLagGrowth} {
		if v, ok := st.Counters[result.PGStandbyName("db.1", "s.2", fig)]; ok {
			t.Errorf("s.2's %s = %v, from lag times that were NULL", fig, v)
		}
	}
	if _, ok := st.Counters[result.PGStandbyName("db.1", "s.2", "behind_mb")]; !ok {
		t.Errorf("s.2's bytes behind missing: %v", st.Counters)
	}
	if f.SharedBuffersBytes != 128<<20 || f.DatasetBytes != 3<<30 || f.PageCacheBytes != 6<<30 {
		t.Errorf("facts %+v", f)
	}
}

func ptr(v float64) *float64 { return &v }

// The window opens once every sampler has started (internal/runner), after this sampler's
// Start: a node lost is told in seconds of the window as it opened, not of the sampler's start.
func TestLostAtCountsFromTheWindowsOpening(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	n := &pgNode{info: NodeInfo{Name: "db.1"}}
	n.reset(t0)
	n.err, n.errAt = errors.New("connection reset"), t0.Add(5*time.Second)
	p := &PG{nodes: []*pgNode{n}, stop: make(chan struct{}), started: t0}
	st := &result.Step{Window: result.Window{Start: t0.Add(1200 * time.Millisecond), End: t0.Add(10 * time.Second)}}
	err := p.Stop(context.Background(), st)
	if err == nil || !strings.Contains(err.Error(), "lost at 3.8 s of the window") {
		t.Errorf("error %v", err)
	}
	x, xerr := st.Sample()
	if xerr != nil || x.Nodes["db.1"].LostAt == nil || math.Abs(*x.Nodes["db.1"].LostAt-3.8) > 1e-9 {
		t.Fatalf("sample %+v %v", x, xerr)
	}
}
