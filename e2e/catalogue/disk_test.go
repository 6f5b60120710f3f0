package catalogue

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// Catalogue cases of agbench disk: the page cache and other IO on the device.
func init() {
	disk := func(t *testing.T, env *catEnv, extra ...string) (string, string) {
		file := filepath.Join(t.TempDir(), "testfile")
		return catRun(t, env, append([]string{"disk", file, "--size", "64M", "--duration", "2s", "--warmup", "0s", "--random", "-b", "8K"}, extra...)...)
	}
	addCase(catalogueCase{
		Verdict: "page-cache",
		Name:    "disk --direct=false (buffered reads of a 64 MiB file)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) { return disk(t, env, "--direct=false") },
		Control: func(t *testing.T, env *catEnv) (string, string) { return disk(t, env) },
	})
	// foreign-io: the tester reads 8 KiB at random, one IO at a time, while a writer in this
	// test rewrites a file on the same device with an fsync every 4 MiB. The control runs alone;
	// CI runs other tests at once, so a control whose verdict fired only fails the case when
	// the IO of every other process, counted apart from the device (/proc/<pid>/io) over the
	// run's measured window, stayed below the verdict's threshold. Counted around the whole
	// run (the test file's creation and the analysis, seconds beside a 2 s window) it was
	// another window's figure: another test's burst of IO in the window could fire the
	// verdict rightly and still average under the threshold over the run. The case runs
	// serially: the catalogue's other cases (servers writing WAL, the page-cache runs) would
	// be other IO in its control's window, and its writer would be in theirs.
	addCase(catalogueCase{
		Verdict: "foreign-io",
		Name:    "disk of 8K random reads while a writer fsyncs to the same device",
		Serial:  true,
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			stop := backgroundWriter(t, filepath.Join(t.TempDir(), "foreign"))
			defer stop()
			return disk(t, env)
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			stop := watch(func() (map[int]int64, bool) { return processIO(), true })
			out, res := disk(t, env)
			readings := stop()
			w := e2etest.ReadOneResult(t, res).Steps[0].Window
			before, after, ok := spanning(readings, w.Start, w.End)
			if !ok || !after.at.After(before.at) {
				t.Fatalf("other processes' IO not read around the window %v..%v", w.Start, w.End)
			}
			others := ioDelta(before.v, after.v) / 1e6 / after.at.Sub(before.at).Seconds()
			t.Logf("other processes moved %.1f MB/s of storage IO in the control's window", others)
			skipIfNotQuiet(t, res, analyze.VForeignIO, others)
			return out, res
		},
	})
}

// backgroundWriter rewrites a 64 MiB file at path in 4 MiB writes, each made durable, until
// the returned function is called (which waits for it to stop).
func backgroundWriter(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer f.Close()
		var off int64
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := f.WriteAt(buf, off); err != nil {
				t.Errorf("background writer: %v", err)
				return
			}
			if err := f.Sync(); err != nil {
				t.Errorf("background writer: %v", err)
				return
			}
			off = (off + int64(len(buf))) % (64 << 20)
		}
	}()
	return func() { close(done); wg.Wait() }
}

// processIO reads the storage bytes (read_bytes + write_bytes of /proc/<pid>/io) of every
// process this one may read, itself excepted, by pid.
func processIO() map[int]int64 {
	out := map[int]int64{}
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		io, err := proc.Host.IO(pid)
		if err != nil {
			continue
		}
		out[pid] = int64(io.ReadBytes + io.WriteBytes)
	}
	return out
}

// ioDelta is the storage bytes other processes moved between two readings (a process
// that began in between counts whole; one that ended is not seen).
func ioDelta(before, after map[int]int64) float64 {
	var d int64
	for pid, n := range after {
		d += n - before[pid]
	}
	return float64(max(d, 0))
}

// skipIfNotQuiet skips a control run whose verdict code fired while other processes did
// at least the IO the verdict allows beyond the workload's (othersMBps, measured apart from
// the device): the machine was not quiet, and the control says nothing. A verdict that
// fired with the machine quiet is left for the catalogue to fail.
func skipIfNotQuiet(t *testing.T, results, code string, othersMBps float64) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(results, "*", result.FileName))
	if len(files) != 1 {
		return
	}
	r, err := result.Read(files[0])
	if err != nil || !slices.Contains(e2etest.FiredVerdicts(t, r), code) || len(r.Steps) == 0 {
		return
	}
	limit := r.Steps[0].Counters[result.MBps]*analyze.ForeignIOShare + analyze.ForeignIOFloorMBps
	if othersMBps >= limit {
		t.Skipf("control not quiet: other processes moved %.1f MB/s of storage IO during it (%s allows %.1f)", othersMBps, code, limit)
	}
	t.Logf("%s fired while other processes moved %.1f MB/s (%s allows %.1f)", code, othersMBps, code, limit)
}

// fits-in-memory: a stress of the catalogue's cluster reads a database of a few MiB, which
// shared_buffers and the page cache hold whole. The control is a database larger than the
// memory the analysis counts: the machine's ~22 GiB are out of reach, so the node is a
// modelled host whose control group holds 192 MiB, shared_buffers and page
// cache included, and the database is made about 260 MiB.
func init() {
	addCase(catalogueCase{
		Verdict: "fits-in-memory",
		Name:    "stress of a database of a few MiB (shared_buffers + page cache hold it)",
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			return catRun(t, env, "stress", "--cluster", env.Cluster(t).Name, "-q", "SELECT count(*) FROM pg_class",
				"--threads", "1", "--rate", "50", "--duration", "2s")
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			if _, err := cgroup.Detect(); err != nil {
				t.Skipf("the control needs a node whose memory is limited (modelled hosts): %v", err)
			}
			topo := clustertest.NewIn(t, env.Home, clustertest.Options{Name: "catmem", Host: cgroup.Budget{Memory: 192 << 20},
				Settings: map[string]string{"shared_buffers": "16MB"}})
			ctx := context.Background()
			c, err := topo.Connect(ctx, topo.Primary())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			if _, err := c.Exec(ctx, "CREATE TABLE big AS SELECT g AS id, repeat('x', 200) AS pad FROM generate_series(1, 1100000) g"); err != nil {
				t.Fatal(err)
			}
			out, res := catRun(t, env, "stress", "--cluster", topo.Name, "-q", "SELECT 1",
				"--threads", "1", "--rate", "50", "--duration", "2s")
			// The control is quiet because it judged a dataset beyond the budget, not because a
			// fact was missing.
			files, _ := filepath.Glob(filepath.Join(res, "*", "result.json"))
			for _, f := range files {
				r, err := result.Read(f)
				if err != nil {
					t.Fatal(err)
				}
				var run analyze.Run
				if err := json.Unmarshal(r.Analysis, &run); err != nil || len(run.Variants) == 0 {
					t.Fatalf("analysis of %s: %v", f, err)
				}
				if fa := run.Variants[0].Input.Facts; fa.DatasetBytes <= fa.SharedBuffersBytes+fa.PageCacheBytes || fa.HostMemoryBytes != 192<<20 {
					t.Errorf("facts %+v: want a dataset beyond shared_buffers + the 192 MiB budget's page cache", fa)
				}
			}
			return out, res
		},
	})
}
