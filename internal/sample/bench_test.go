package sample

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// BenchmarkPGSamplerOverhead measures what the samplers cost the workload: pgbench -S
// (select-only, 2 clients) on a local cluster, alternately without and with the database
// sampler (10 Hz waits, 1 s statistics, both nodes) and the OS sampler, six runs each;
// it reports the median TPS of each side, their ratio, and the sampler's own CPU.
func BenchmarkPGSamplerOverhead(b *testing.B) {
	clustertest.Require(b)
	topo := clustertest.New(b, clustertest.Options{Standbys: 1})
	prim := topo.Primary()
	pgbench := topo.PG.Path("pgbench")
	if _, err := os.Stat(pgbench); err != nil {
		pgbench = "pgbench"
	}
	base := []string{"-h", prim.Host, "-p", strconv.Itoa(prim.Port), "-U", topo.Superuser}
	run := func(args ...string) string {
		cmd := exec.Command(pgbench, append(base, append(args, topo.Database)...)...)
		cmd.Env = append(os.Environ(), "PGPASSFILE="+topo.PassFile)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("pgbench %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("-i", "-q", "-s", "5")
	tpsRe := regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	var nodes []PGNode
	for i := range topo.Nodes {
		nodes = append(nodes, PGNode{topo.Nodes[i].Name, topo.ConnString(&topo.Nodes[i], "")})
	}
	ctx := context.Background()
	pg, err := NewPG(ctx, nodes, PGOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close(ctx)
	osStep, err := NewOSStep(OSConfig{Paths: []string{prim.DataDir}}, 0)
	if err != nil {
		b.Fatal(err)
	}
	const runs, secs = 6, 5
	var off, on []float64
	var samplerCPU, samplerWall time.Duration
	b.ResetTimer()
	for i := 0; i < runs*2; i++ {
		sampled := i%2 == 1
		st := &result.Step{Window: result.Window{Start: time.Now()}}
		cpu0, _ := SelfCPU()
		if sampled {
			if err := pg.Start(ctx, st); err != nil {
				b.Fatal(err)
			}
			if err := osStep.Start(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
		out := run("-S", "-n", "-c", "2", "-j", "2", "-T", strconv.Itoa(secs))
		if sampled {
			if err := osStep.Stop(ctx, st); err != nil {
				b.Fatal(err)
			}
			if err := pg.Stop(ctx, st); err != nil {
				b.Fatal(err)
			}
			cpu1, _ := SelfCPU()
			samplerCPU += cpu1 - cpu0
			samplerWall += time.Since(st.Window.Start)
		}
		m := tpsRe.FindStringSubmatch(out)
		if m == nil {
			b.Fatalf("no tps in pgbench output:\n%s", out)
		}
		tps, _ := strconv.ParseFloat(m[1], 64)
		if sampled {
			on = append(on, tps)
		} else {
			off = append(off, tps)
		}
	}
	b.StopTimer()
	mOff, mOn := stats.Median(off), stats.Median(on)
	b.ReportMetric(mOff, "tps-unsampled")
	b.ReportMetric(mOn, "tps-sampled")
	b.ReportMetric(mOn/mOff, "ratio")
	b.ReportMetric(100*samplerCPU.Seconds()/samplerWall.Seconds(), "sampler-cpu-%-of-core")
	b.Logf("pgbench -S -c 2, %d s runs interleaved: unsampled %v, sampled %v TPS", secs, off, on)
}

// BenchmarkDiskstatsVsFio compares the OS sampler's view of the device with fio's own
// "Disk stats" for the same run: a 5 s random 4 KiB O_DIRECT read/write job on a file on
// the disk. It reports the device IOs each counted and both utilisations (medians of 3).
func BenchmarkDiskstatsVsFio(b *testing.B) {
	fio, err := exec.LookPath("fio")
	if err != nil {
		b.Skip("no fio")
	}
	dir, err := os.MkdirTemp("/var/tmp", "agbench-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dev, err := DeviceForPath("/sys", dir)
	if err != nil {
		b.Skip(err)
	}
	o, err := NewOSStep(OSConfig{Paths: []string{dir}}, 500*time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	args := []string{"--name=cmp", "--filename=" + filepath.Join(dir, "f"), "--size=256M", "--direct=1",
		"--rw=randrw", "--bs=4k", "--iodepth=8", "--ioengine=psync", "--numjobs=2", "--time_based", "--runtime=5", "--group_reporting"}
	if out, err := exec.Command(fio, append(args, "--runtime=1")...).CombinedOutput(); err != nil { // lay the file out first
		b.Fatalf("fio: %v\n%s", err, out)
	}
	var ours, theirs, ourUtil, theirUtil []float64
	for i := 0; i < 3; i++ {
		st := &result.Step{Window: result.Window{Start: time.Now()}}
		if err := o.Start(ctx, st); err != nil {
			b.Fatal(err)
		}
		out, err := exec.Command(fio, args...).CombinedOutput()
		if err != nil {
			b.Fatalf("fio: %v\n%s", err, out)
		}
		st.Window.End = time.Now()
		if err := o.Stop(ctx, st); err != nil {
			b.Fatal(err)
		}
		// fio: "vda: ios=12345/6789, merge=..., ticks=..., in_queue=..., util=98.76%"
		m := regexp.MustCompile(regexp.QuoteMeta(dev) + `: ios=(\d+)/(\d+).*util=([0-9.]+)%`).FindStringSubmatch(string(out))
		if m == nil {
			b.Fatalf("no disk stats for %s in fio output:\n%s", dev, out)
		}
		r, _ := strconv.ParseFloat(m[1], 64)
		w, _ := strconv.ParseFloat(m[2], 64)
		u, _ := strconv.ParseFloat(m[3], 64)
		theirs = append(theirs, r+w)
		theirUtil = append(theirUtil, u/100)
		ours = append(ours, st.Counters["disk."+dev+".iops"]*st.Window.Seconds())
		ourUtil = append(ourUtil, st.Counters["disk."+dev+".util"])
	}
	b.ReportMetric(stats.Median(ours), "sampler-ios")
	b.ReportMetric(stats.Median(theirs), "fio-ios")
	b.ReportMetric(stats.Median(ourUtil), "sampler-util")
	b.ReportMetric(stats.Median(theirUtil), "fio-util")
	b.Logf("device %s: IOs counted by the sampler %v (util %v); by fio %v (util %v); the sampler's window is a little longer than fio's job and the machine is shared", dev, ours, ourUtil, theirs, theirUtil)
}
