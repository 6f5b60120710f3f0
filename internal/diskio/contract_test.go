package diskio

import (
	"math"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// What the storage tester writes into a result (its run section, its counters, its config)
// reaches internal/analyze through a result file: the device's name, the device and CPU
// figures, and that the test bypassed the page cache. A name changed on either side fails
// here instead of quietly dropping the device or the cache verdict.
func TestDiskRunReachesTheAnalysis(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	w := DefaultWorkload()
	w.QD = 4
	rep := &Report{Start: t0, File: &TestFile{Path: "/data/agbench.test", Size: 1 << 30}, Device: "nvme0n1",
		Steps: []*StepResult{{Workload: w, Engine: "sync", Start: t0, Seconds: 10, Complete: true,
			Read:   OpStats{IOs: 40000, Bytes: 40000 << 17, IOPS: 4000, MBps: 524},
			Total:  OpStats{IOs: 40000, Bytes: 40000 << 17, IOPS: 4000, MBps: 524},
			CPU:    CPUView{MachineUserPct: 10, MachineSysPct: 20, MachineStealPct: 1, Cores: 2},
			Device: &DeviceView{Name: "nvme0n1", ReadIOPS: 4000, ReadMBps: 524, ReadAwaitMs: 0.9, AvgQueue: 3.8, UtilPct: 97}}}}
	res := result.New("disk", "test", nil)
	if err := FillResult(rep, res); err != nil {
		t.Fatal(err)
	}
	res.Finish(nil)
	dir := t.TempDir()
	if _, err := result.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := back.DiskRun(); err != nil || d == nil || d.Device != "nvme0n1" {
		t.Fatalf("run section %+v %v", d, err)
	}
	var whole RunExtra
	if ok, err := back.ExtraOf(result.ExtraDisk, &whole); !ok || err != nil || whole.File.Path != "/data/agbench.test" || whole.Device != "nvme0n1" {
		t.Fatalf("whole run section %+v %v %v", whole, ok, err)
	}
	run, err := analyze.FromResult(back, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := run.Variants[0].Input
	e, f := in.Evidence[0], in.Facts
	if !f.Storage || !f.DirectIO {
		t.Errorf("facts %+v: want a storage test with direct IO", f)
	}
	if e.Device.Name != "nvme0n1" || e.Device.IOPS != 4000 || math.Abs(e.Device.Util-0.97) > 1e-9 || e.Device.AwaitMs != 0.9 || e.Device.Queue != 3.8 {
		t.Errorf("device %+v", e.Device)
	}
	if math.Abs(e.CPUBusy-0.3) > 1e-9 || math.Abs(e.Steal-0.01) > 1e-9 || e.ExpectedDeviceMBps != 524 {
		t.Errorf("CPU busy %v, steal %v, expected MB/s %v", e.CPUBusy, e.Steal, e.ExpectedDeviceMBps)
	}
}
