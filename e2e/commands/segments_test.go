package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/k8s"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
	"github.com/agbench/agbench/internal/workload/tpcc"
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

// TestSegmentsAsProcesses runs a stress run as the Kubernetes Job agbench k8s job writes:
// its manifest decoded strictly, and each pod's command run as a process against one
// cluster with JOB_COMPLETION_INDEX set, as the kubelet runs it. agbench k8s collect merges
// what they wrote: the merged operations are the segments' sum, its p99 that of the union
// of their recorded latencies, and the segments began within a second of each other.
func TestSegmentsAsProcesses(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	dir := t.TempDir()
	const of = 3
	// The pods have no file of this machine: the password reaches them in their environment,
	// as the Job's Secret gives it (here PGPASSFILE, the cluster's own).
	primary := strings.Replace(topo.ConnString(topo.Primary(), db), " passfile="+topo.PassFile, "", 1)
	code, manifest, errs := e2etest.Run(t, env, "k8s", "job", "--segments", fmt.Sprint(of), "--name", "e2e-segments", "--image", "agbench:e2e", "--results-claim", "e2e-results",
		"--", "stress", "--primary", primary, "-q", "SELECT 1", "--threads", "3", "--duration", "3s", "--sample=false")
	if code != 0 {
		t.Fatalf("k8s job: exit %d\nstderr %s", code, errs)
	}
	plan, pod := podOf(t, manifest, of)
	if err := os.WriteFile(filepath.Join(dir, k8s.PlanKey), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	procs := make([]*e2etest.Proc, of)
	for i := range procs {
		e := maps.Clone(env)
		e[k8s.IndexEnv] = fmt.Sprint(i)
		e["PGPASSFILE"] = topo.PassFile
		// The pod's args as the kubelet expands them, its volumes' paths those of this machine.
		args := make([]string, len(pod.Args))
		for k, a := range pod.Args {
			a = strings.ReplaceAll(a, "$("+k8s.IndexEnv+")", fmt.Sprint(i))
			a = strings.Replace(a, k8s.PlanFile, filepath.Join(dir, k8s.PlanKey), 1)
			args[k] = strings.Replace(a, k8s.ResultsDir, results, 1)
		}
		procs[i] = e2etest.Start(t, e, args...)
	}
	for i, p := range procs {
		if code := p.Wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("segment %d: exit %d\nstdout %s\nstderr %s", i, code, p.Stdout, p.Stderr)
		}
		// Its own lines say its share of the run's three threads, not the whole run's.
		if says := fmt.Sprintf("segment %d/3: 1 of 3 threads", i); !strings.Contains(p.Stderr.String(), "step 1/1 "+says+" #1: ") ||
			!strings.Contains(p.Stdout.String(), "   1 of 3 ") || !strings.Contains(p.Stdout.String(), fmt.Sprintf("segment %d/3 of run e2e-segments", i)) {
			t.Errorf("segment %d does not say its share (%q):\n%s\n%s", i, says, p.Stderr, p.Stdout)
		}
	}
	merged := filepath.Join(dir, "merged")
	code, out, errs := e2etest.Run(t, env, "k8s", "collect", results, "--results", merged)
	if code != 0 {
		t.Fatalf("k8s collect: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	m := e2etest.ReadOneResult(t, merged)
	if !m.Complete || len(m.Steps) != 1 || m.Meta.Merged == nil || len(m.Meta.Merged.Segments) != of || len(m.Analysis) == 0 {
		t.Fatalf("merged: complete %v (%s), %d steps, merged %+v", m.Complete, m.IncompleteReason, len(m.Steps), m.Meta.Merged)
	}
	union := hdrhistogram.New(1, 3_600_000_000, 3)
	var sum int64
	var starts []result.SegmentStart
	var windows []time.Time
	for i := 0; i < of; i++ {
		s := e2etest.ReadOneResult(t, filepath.Join(results, fmt.Sprint(i)))
		if s.Meta.Segment == nil || s.Meta.Segment.Index != i || s.Meta.Segment.Run != "e2e-segments" || len(s.Meta.Segment.Starts) != 1 || s.Steps[0].VUs != 1 {
			t.Fatalf("segment %d: meta %+v, %d VUs", i, s.Meta.Segment, s.Steps[0].VUs)
		}
		q := s.Steps[0].Ops["query"]
		sum += q.Count
		h, err := hdrhistogram.Decode([]byte(q.Latency.HDR))
		if err != nil {
			t.Fatal(err)
		}
		union.Merge(h)
		starts = append(starts, s.Meta.Segment.Starts[0])
		windows = append(windows, s.Steps[0].Window.Start)
	}
	q := m.Steps[0].Ops["query"]
	if q.Count != sum || q.Latency.Count != sum || union.TotalCount() != sum || m.Steps[0].VUs != of {
		t.Fatalf("merged %d operations (histogram %d), segments' sum %d (union %d), %d VUs", q.Count, q.Latency.Count, sum, union.TotalCount(), m.Steps[0].VUs)
	}
	if p99 := union.ValueAtQuantile(99); q.Latency.P99 != p99 {
		t.Fatalf("merged p99 %d µs, the union's %d µs", q.Latency.P99, p99)
	}
	spread := startedTogether(t, starts, windows)
	t.Logf("merged %d operations = sum of segments; p99 %d µs = union's; segments began within %v (windows %v)", sum, q.Latency.P99, spread, spreadOf(windows))
	for _, want := range []string{"merged 3 of 3 segments", "threads", "segments  step 1 began within"} {
		if !strings.Contains(out, want) {
			t.Errorf("collect output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := e2etest.Run(t, env, "report", merged, "-q", "-o", filepath.Join(dir, "report.html")); code != 0 {
		t.Fatalf("report of the merged run: exit %d\n%s", code, errs)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "<dt>segments</dt><dd>3 of 3 merged") || !strings.Contains(string(page), "step 1 began within") {
		t.Errorf("the report does not say the run's segments (%v)", err)
	}
	if code, out, errs := e2etest.Run(t, env, "report", merged, "-o", filepath.Join(dir, "report2.html")); code != 0 || !strings.Contains(out, "segments  3 of 3 merged") {
		t.Errorf("report's tables do not say the run's segments: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestTPCCSegmentsMerge runs tpcc run as three segments, processes against one cluster, on a
// schema of three warehouses: once with VUs and once with terminals over a pool of sessions.
// The database itself shows that each segment's New-Orders went to its own warehouse only
// (each district's next order id moved by that segment's committed New-Orders, give or take
// the ones still running as its window closed); the merged New-Orders and NOPM are the
// segments' sums, and the segments began within a second of each other.
func TestTPCCSegmentsMerge(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--cluster", topo.Name, "-d", db, "--warehouses", "3"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	watch, err := pgx.Connect(ctx, topo.ConnString(topo.Primary(), db))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(context.Background())
	vusDir, termsDir := filepath.Join(t.TempDir(), "vus"), filepath.Join(t.TempDir(), "terminals")
	t.Run("vus", func(t *testing.T) {
		m, segs := tpccSegments(t, ctx, watch, env, topo.Name, db, vusDir, "segment %d/3: 1 of 3 VUs", "--vus", "3")
		for i, s := range segs {
			if s.Steps[0].VUs != 1 {
				t.Errorf("segment %d ran %d VUs, want 1 of 3", i, s.Steps[0].VUs)
			}
		}
		if m.Steps[0].VUs != 3 {
			t.Errorf("merged run of %d VUs, want 3", m.Steps[0].VUs)
		}
	})
	t.Run("terminals", func(t *testing.T) {
		m, segs := tpccSegments(t, ctx, watch, env, topo.Name, db, termsDir, "segment %d/3: 10 of 30 terminals over 1 of 3 sessions",
			"--terminals", "30", "--sessions", "3", "--think-scale", "0.01")
		for i, s := range segs {
			if ts := terminalsOf(t, s); ts.Terminals != 10 || ts.Sessions != 1 {
				t.Errorf("segment %d emulated %d terminals over %d sessions, want 10 of 30 over 1 of 3", i, ts.Terminals, ts.Sessions)
			}
		}
		ts := terminalsOf(t, m)
		// Ten terminals per warehouse over the whole run: only the think scale is outside the rule.
		if ts.Terminals != 30 || ts.Sessions != 3 || ts.Warehouses != 3 || ts.OutsideSpec() != "keying and think times scaled by 0.01" {
			t.Errorf("merged terminals %+v: %q", ts, ts.OutsideSpec())
		}
	})
	if t.Failed() {
		return
	}
	// Segments of one experiment with other settings are refused, naming the setting, and
	// nothing is written.
	out := filepath.Join(t.TempDir(), "merged")
	code, _, errs := e2etest.Run(t, env, "merge", filepath.Join(vusDir, "0"), filepath.Join(termsDir, "1"), filepath.Join(vusDir, "2"), "--results", out)
	if code != 2 || !strings.Contains(errs, "are not segments of one run: setting ") {
		t.Errorf("merge of segments of other settings: exit %d, stderr %q; want 2 naming the setting", code, errs)
	}
	e2etest.WantNothing(t, filepath.Join(out, "*"))
}

// tpccSegments runs tpcc run with args as three segments (--segment i/3) of a 3-second
// window, merges them and checks the district's next order ids moved by each segment's own
// New-Orders on its own warehouse only, the merged sums and the segments' start, and that
// segment i's progress and tables said its share (share, formatted with i). The segments
// write under dir (0, 1, 2, and the merge under merged). It returns the merged result and
// the segments'.
func tpccSegments(t *testing.T, ctx context.Context, watch *pgx.Conn, env map[string]string, cluster, db, dir, share string, args ...string) (*result.Result, []*result.Result) {
	t.Helper()
	const of = 3
	before := nextOrderIDs(t, ctx, watch)
	procs := make([]*e2etest.Proc, of)
	for i := range procs {
		procs[i] = e2etest.Start(t, env, append([]string{"tpcc", "run", "--cluster", cluster, "-d", db, "--rampup", "0s", "--duration", "3s",
			"--sample=false", "--segment", fmt.Sprintf("%d/%d", i, of), "--results", filepath.Join(dir, fmt.Sprint(i))}, args...)...)
	}
	segs := make([]*result.Result, of)
	var nopm float64
	var neword int64
	var starts []result.SegmentStart
	var windows []time.Time
	for i, p := range procs {
		if code := p.Wait(t, 3*time.Minute); code != 0 {
			t.Fatalf("segment %d: exit %d\nstdout %s\nstderr %s", i, code, p.Stdout, p.Stderr)
		}
		segs[i] = e2etest.ReadOneResult(t, filepath.Join(dir, fmt.Sprint(i)))
		st := segs[i].Steps[0]
		nopm += st.Counters[result.TPCCNOPM]
		neword += st.Ops[result.TPCCOps[0]].Count
		if sg := segs[i].Meta.Segment; sg == nil || len(sg.Starts) != 1 {
			t.Fatalf("segment %d: meta %+v", i, sg)
		}
		starts = append(starts, segs[i].Meta.Segment.Starts[0])
		windows = append(windows, st.Window.Start)
		// A segment's NOPM is its share; the server's count is the whole run's: not compared.
		if w := strings.Join(st.Warnings, "\n"); strings.Contains(w, "NOPM: client") || strings.Contains(p.Stderr.String(), "NOPM: client") {
			t.Fatalf("segment %d compared its share with the whole server's count:\n%s\n%s", i, w, p.Stderr)
		}
		says := fmt.Sprintf(share, i)
		if !strings.Contains(p.Stderr.String(), "step 1/1 "+says+" #1: ") || !strings.Contains(p.Stdout.String(), "step 1: "+says+",") {
			t.Errorf("segment %d's progress or tables do not say %q:\n%s\n%s", i, says, p.Stderr, p.Stdout)
		}
		if !strings.Contains(p.Stderr.String()+p.Stdout.String(), "compared by agbench merge") {
			t.Fatalf("segment %d does not say why its cross-check is left to the merge:\n%s\n%s", i, p.Stdout, p.Stderr)
		}
	}
	after := nextOrderIDs(t, ctx, watch)
	// Segment i of three homes every VU or terminal on warehouse i+1 (segment.Range): all its
	// committed New-Orders (those rolled back by their unused item leave the district's next
	// order id as it was) moved that warehouse's districts, none another's, and no other
	// segment's moved them. Uncounted, the New-Order a segment's one session was running as
	// its window closed may commit too; the runner begins none after that (the load, with no
	// ramp-up, began none before the window), so each warehouse moved by at most one more.
	for i, s := range segs {
		st := s.Steps[0]
		committed := st.Ops[result.TPCCOps[0]].Count - int64(st.Counters[result.TPCCRolledBack])
		moved := after[i+1] - before[i+1]
		if committed <= 0 || moved < committed || moved > committed+1 {
			t.Errorf("warehouse %d: districts' next order ids moved by %d; segment %d committed %d New-Orders (%d more in flight at its window's end)",
				i+1, moved, i, committed, st.InFlight)
		}
	}
	merged := filepath.Join(dir, "merged")
	if code, out, errs := e2etest.Run(t, env, "merge", filepath.Join(dir, "0"), filepath.Join(dir, "1"), filepath.Join(dir, "2"), "--results", merged); code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errs)
	}
	m := e2etest.ReadOneResult(t, merged)
	st := m.Steps[0]
	if w := strings.Join(st.Warnings, "\n"); strings.Contains(w, "NOPM: client") {
		t.Errorf("merged run's sums disagree with the server's count:\n%s", w)
	}
	if got := st.Ops[result.TPCCOps[0]].Count; got != neword || neword == 0 || st.Counters[result.TPCCNOPM] != nopm {
		t.Errorf("merged New-Orders %d NOPM %.1f; segments' sums %d, %.1f", got, st.Counters[result.TPCCNOPM], neword, nopm)
	}
	spread := startedTogether(t, starts, windows)
	t.Logf("%v: merged %d New-Orders, NOPM %.1f = the segments' sums; began within %v", args, neword, nopm, spread)
	return m, segs
}

// nextOrderIDs sums the districts' next order ids by warehouse: each committed New-Order
// moves its district's by one.
func nextOrderIDs(t *testing.T, ctx context.Context, c *pgx.Conn) map[int]int64 {
	t.Helper()
	rows, err := c.Query(ctx, `SELECT d_w_id, sum(d_next_o_id)::bigint FROM `+tpcc.Schema+`.district GROUP BY d_w_id`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for rows.Next() {
		var w int
		var n int64
		if err := rows.Scan(&w, &n); err != nil {
			t.Fatal(err)
		}
		out[w] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// podOf decodes the manifest k8s job wrote, strictly as the API's types, and returns the
// plan its ConfigMap holds and the container every pod of its Indexed Job runs.
func podOf(t *testing.T, manifest string, of int) (string, corev1.Container) {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	ser := k8s.Serializer(true)
	var plan string
	var job *batchv1.Job
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := ser.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("manifest does not decode strictly: %v\n%s", err, doc)
		}
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			plan = o.Data[k8s.PlanKey]
		case *batchv1.Job:
			job = o
		}
	}
	if plan == "" || job == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Completions != int32(of) {
		t.Fatalf("manifest: plan %q job %+v\n%s", plan, job, manifest)
	}
	return plan, job.Spec.Template.Spec.Containers[0]
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

// startedTogether checks what the segments' barrier decides: every segment agreed on one
// start, began it no earlier (a millisecond for the wall clock's slewing), and opened its
// window after it began (the window is on the segment's own clock, the start on the
// database's: the segment's measured offset between them is taken off); it returns how
// far apart they began. That spread is not bounded here: a segment's process can be left
// unscheduled for hundreds of milliseconds on a busy machine (221 ms was seen beside a
// second CI run), and the merged run says the spread.
func startedTogether(t *testing.T, starts []result.SegmentStart, windows []time.Time) time.Duration {
	t.Helper()
	began := make([]time.Time, len(starts))
	for i, st := range starts {
		if !st.At.Equal(starts[0].At) {
			t.Fatalf("segments agreed on different starts: %+v", starts)
		}
		own := st.Began.Add(-time.Duration(st.ClockOffsetSeconds * float64(time.Second)))
		if st.Began.Before(st.At.Add(-time.Millisecond)) || windows[i].Before(own.Add(-time.Millisecond)) {
			t.Fatalf("segment %d began at %v (%v by its clock), its window opened at %v: before the agreed start %v", i, st.Began, own, windows[i], st.At)
		}
		began[i] = st.Began
	}
	return spreadOf(began)
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

// TestLoneSegmentTimesOut runs one segment of two whose other never comes: it fails at the
// barrier naming the one that did not arrive, and leaves nothing under --results, not even
// the folder (it measured nothing).
func TestLoneSegmentTimesOut(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	res := filepath.Join(t.TempDir(), "results")
	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-d", db, "-q", "SELECT 1", "--threads", "2",
		"--duration", "2s", "--sample=false", "--segment", "0/2", "--segment-run", "e2e-"+t.Name(), "--segment-timeout", "1s",
		"--results", res)
	if code == 0 || !strings.Contains(errs, "segment(s) 1 of 2 did not arrive") {
		t.Fatalf("a lone segment: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if _, err := os.Stat(res); !errors.Is(err, os.ErrNotExist) {
		entries, _ := os.ReadDir(res)
		t.Fatalf("a segment that measured nothing left %s behind (%v, %d entries)\nstderr %s", res, err, len(entries), errs)
	}
}
