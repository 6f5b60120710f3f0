package commands

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
)

// startSegments starts the of segments of one stress run as processes, each numbered by
// JOB_COMPLETION_INDEX as a pod of an Indexed Job is, and writing into a folder of its own
// under dir (seg0, seg1 ...).
func startSegments(t *testing.T, topo *cluster.Topology, env map[string]string, db, dir, run string, of int, duration string) []*e2etest.Proc {
	t.Helper()
	procs := make([]*e2etest.Proc, of)
	for i := range procs {
		e := maps.Clone(env)
		e[experiment.CompletionIndexEnv] = fmt.Sprint(i)
		procs[i] = e2etest.Start(t, e, "stress", "--cluster", topo.Name, "-d", db, "--query", "SELECT 1", "--threads", "3",
			"--duration", duration, "--sample=false", "--segments", fmt.Sprint(of), "--segment-run", run,
			"--results", filepath.Join(dir, fmt.Sprintf("seg%d", i)))
	}
	return procs
}

// TestSegmentsAsProcesses runs three segments of one stress run as processes against one
// cluster and merges them: the merged operations are the segments' sum, its p99 that of the
// union of their recorded latencies, and the segments began within a second of each other.
func TestSegmentsAsProcesses(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	dir := t.TempDir()
	const of = 3
	procs := startSegments(t, topo, env, db, dir, "e2e-"+t.Name(), of, "3s")
	for i, p := range procs {
		if code := p.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("segment %d: exit %d\nstdout %s\nstderr %s", i, code, p.Stdout, p.Stderr)
		}
	}
	merged := filepath.Join(dir, "merged")
	code, out, errs := e2etest.Run(t, env, "merge", filepath.Join(dir, "seg0"), filepath.Join(dir, "seg1"), filepath.Join(dir, "seg2"), "--results", merged)
	if code != 0 {
		t.Fatalf("merge: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	m := e2etest.ReadOneResult(t, merged)
	if !m.Complete || len(m.Steps) != 1 || m.Meta.Merged == nil || len(m.Meta.Merged.Segments) != of || len(m.Analysis) == 0 {
		t.Fatalf("merged: complete %v (%s), %d steps, merged %+v", m.Complete, m.IncompleteReason, len(m.Steps), m.Meta.Merged)
	}
	union := hdrhistogram.New(1, 3_600_000_000, 3)
	var sum int64
	var began, windows []time.Time
	for i := 0; i < of; i++ {
		s := e2etest.ReadOneResult(t, filepath.Join(dir, fmt.Sprintf("seg%d", i)))
		if s.Meta.Segment == nil || s.Meta.Segment.Index != i || len(s.Meta.Segment.Starts) != 1 || s.Steps[0].VUs != 1 {
			t.Fatalf("segment %d: meta %+v, %d VUs", i, s.Meta.Segment, s.Steps[0].VUs)
		}
		q := s.Steps[0].Ops["query"]
		sum += q.Count
		h, err := hdrhistogram.Decode([]byte(q.Latency.HDR))
		if err != nil {
			t.Fatal(err)
		}
		union.Merge(h)
		began = append(began, s.Meta.Segment.Starts[0].Began)
		windows = append(windows, s.Steps[0].Window.Start)
	}
	q := m.Steps[0].Ops["query"]
	if q.Count != sum || q.Latency.Count != sum || union.TotalCount() != sum || m.Steps[0].VUs != of {
		t.Fatalf("merged %d operations (histogram %d), segments' sum %d (union %d), %d VUs", q.Count, q.Latency.Count, sum, union.TotalCount(), m.Steps[0].VUs)
	}
	if p99 := union.ValueAtQuantile(99); q.Latency.P99 != p99 {
		t.Fatalf("merged p99 %d µs, the union's %d µs", q.Latency.P99, p99)
	}
	spread, wspread := spreadOf(began), spreadOf(windows)
	if spread >= time.Second || wspread >= time.Second {
		t.Fatalf("segments began %v apart (windows %v): %v", spread, wspread, began)
	}
	t.Logf("merged %d operations = sum of segments; p99 %d µs = union's; segments began within %v (windows %v)", sum, q.Latency.P99, spread, wspread)
	for _, want := range []string{"merged 3 of 3 segments", "threads"} {
		if !strings.Contains(out, want) {
			t.Errorf("merge output lacks %q:\n%s", want, out)
		}
	}
}

// TestKilledSegmentMakesMergeIncomplete kills one of three segments once they have begun:
// the merge of what the segments left is incomplete and names the one missing.
func TestKilledSegmentMakesMergeIncomplete(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	dir := t.TempDir()
	run := "e2e-" + t.Name()
	procs := startSegments(t, topo, env, db, dir, run, 3, "6s")
	waitBegun(t, topo, db, run, 3)
	// Killed as a pod's node that fails: it writes nothing more (its end is reaped at cleanup).
	procs[1].Signal(t, syscall.SIGKILL)
	for _, i := range []int{0, 2} {
		if code := procs[i].Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("segment %d: exit %d\nstderr %s", i, code, procs[i].Stderr)
		}
	}
	merged := filepath.Join(dir, "merged")
	code, out, errs := e2etest.Run(t, env, "merge", dir, "--results", merged)
	if code != 1 || !strings.Contains(errs, "segment(s) 1 of 3 missing") {
		t.Fatalf("merge without the killed segment: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	m := e2etest.ReadOneResult(t, merged)
	if m.Complete || !strings.Contains(m.IncompleteReason, "segment(s) 1 of 3 missing") || !reflectMissing(m, 1) {
		t.Fatalf("merged: complete %v, %q, missing %v", m.Complete, m.IncompleteReason, m.Meta.Merged.Missing)
	}
}

// waitBegun waits until the of segments of run have all arrived at the first step's barrier
// and the start they agreed on has passed, by the database's clock.
func waitBegun(t *testing.T, topo *cluster.Topology, db, run string, of int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := target.Connect(ctx, topo.ConnString(topo.Primary(), db), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for {
		var begun bool
		err := c.QueryRow(ctx, `SELECT count(*) = $2 AND max(arrived) + interval '1.5 s' < clock_timestamp()
			FROM `+experiment.BarrierTable+` WHERE run = $1 AND step = 0`, run, of).Scan(&begun)
		if err != nil && !strings.Contains(err.Error(), "does not exist") {
			t.Fatal(err)
		}
		if begun {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the segments of %s did not all begin", run)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func reflectMissing(m *result.Result, i int) bool {
	return m.Meta.Merged != nil && len(m.Meta.Merged.Missing) == 1 && m.Meta.Merged.Missing[0] == i
}

// spreadOf is the latest time minus the earliest.
func spreadOf(ts []time.Time) time.Duration {
	lo, hi := ts[0], ts[0]
	for _, x := range ts {
		if x.Before(lo) {
			lo = x
		}
		if x.After(hi) {
			hi = x
		}
	}
	return hi.Sub(lo)
}
