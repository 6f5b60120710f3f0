package readahead_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/workload/readahead"
)

// TestDeviceReadsCountedInTheirOwnRunOnASlowDisk makes a flake once seen under load happen
// on purpose. A query with the kernel's read-ahead on returns while its last read-ahead can still
// be in flight on the device; on a busy machine that read completes milliseconds later. A
// measurement that counts the device's completed reads between two instants then loses it
// from the run that caused it and counts it in whatever run is measuring when it lands (a
// warm run that read nothing showed "device ops 1"). Here the private device's reads are
// throttled (the experiment's own --throttle-iops, cgroup v1 blkio), so that reads complete
// late as on a busy disk, every time.
//
// A read of the device in the second after a run is the run's only if nothing else read the
// device then; once in a CI run two reads (20 KB) landed there while the run had counted the
// same bytes as the runs before it (5,365,760), so they were not its own. A run without any
// late read counted all it read; a run with late reads that counted the same bytes lost
// none. The test fails when a run's bytes differ, or when no run was free of late reads
// (then nothing says which bytes are right).
func TestDeviceReadsCountedInTheirOwnRunOnASlowDisk(t *testing.T) {
	clustertest.Require(t)
	topo := clustertest.New(t, clustertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := readahead.Config{Rows: 200_000, RangeIDs: 50_000, JoinIDs: 300, Repeat: 1, Queries: []string{"range"},
		ThrottleIOPS: 25, Progress: func(l string) { t.Log(l) }}
	e, err := readahead.Setup(ctx, server{topo}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cond := e.Conditions()
	if cond.DeviceName == "" {
		t.Skipf("needs the private device: %s", cond.Device)
	}
	if strings.HasPrefix(cond.Throttle, "none") {
		t.Skipf("needs the read throttle to make the device slow: %s", cond.Throttle)
	}
	// lateReads counts the private device's reads that complete in the second after a run
	// returned: a read of the run's would be missing from its figures (and would be counted
	// in the next run's).
	lateReads := func() (ops, bytes uint64) {
		read := func() proc.DiskCounters {
			m, err := proc.Host.Diskstats()
			if err != nil {
				t.Fatal(err)
			}
			return m[cond.DeviceName]
		}
		a := read()
		time.Sleep(time.Second)
		b := read()
		return b.Reads - a.Reads, (b.SectorsRead - a.SectorsRead) * proc.SectorBytes
	}
	q := readahead.Queries(cfg.RangeIDs, cfg.JoinIDs)[0]
	var ref int64
	clean := 0 // runs after which no device read completed
	for i := 0; i < 3; i++ {
		// Cold, read-ahead on: every run reads the same pages in the same way, so every run
		// that counts all its own reads shows the same bytes, whatever the device's latency.
		cold, err := e.Measure(ctx, q, true, true, i)
		if err != nil {
			t.Fatal(err)
		}
		lateOps, lateBytes := lateReads()
		t.Logf("cold %d: read %d pages, device %d ops %d B; %d reads (%d B) completed after the run", i,
			cold.Plan.SharedRead, cold.DevOps, cold.DevBytes, lateOps, lateBytes)
		if lateOps == 0 {
			clean++
		}
		if i == 0 {
			ref = cold.DevBytes
		} else if cold.DevBytes != ref {
			t.Errorf("cold %d: device read %d B; the first cold run %d B; want the same", i, cold.DevBytes, ref)
		}
		if cold.DevBytes < cold.Plan.SharedRead*8192 {
			t.Errorf("cold %d: device read %d B for %d pages", i, cold.DevBytes, cold.Plan.SharedRead)
		}
		// Warm, straight after: every page is in shared buffers; no device read is the run's.
		warm, err := e.Measure(ctx, q, true, false, i)
		if err != nil {
			t.Fatal(err)
		}
		if warm.Plan.SharedRead != 0 || warm.Plan.SharedHit == 0 || warm.DevOps != 0 {
			t.Errorf("warm %d: hit %d read %d device ops %d; want hits only", i, warm.Plan.SharedHit, warm.Plan.SharedRead, warm.DevOps)
		}
	}
	if clean == 0 {
		t.Errorf("device reads completed in the second after every cold run: none of the runs' figures is known to hold all it read")
	}
}
