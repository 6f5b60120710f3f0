// Command benchdisk runs fio and `agbench disk` with the same parameters, interleaved, on
// one test file, and prints IOPS, p50/p99 latency and CPU per IO for both with ratios
// (medians of several short runs, and the median of each run's own ratios, on which the
// verdict rests). `make bench-disk` runs it; it is a benchmark, not a test.
//
// Imports from agbench: only internal/diskio, internal/result, internal/stats.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// Targets: agbench disk stands in for fio only if it drives the device as hard at about
// the same cost: at least 0.97x fio's IOPS at every point, p99 within 10%, and CPU per IO
// at most 1.2x fio's.
const (
	minIOPSRatio = 0.97
	maxP99Ratio  = 1.10
	maxCPURatio  = 1.20
)

type benchCase struct {
	name string
	bs   string
	rand bool
	qd   int
}

type sample struct {
	iops, p50us, p99us, cpuUsPerIO float64
}

func main() {
	bin := flag.String("agbench", "bin/agbench", "agbench binary")
	fio := flag.String("fio", "/usr/bin/fio", "fio binary")
	dir := flag.String("dir", "", "folder on the disk under test (default: a new one under /work or /tmp)")
	size := flag.String("size", "1G", "test file data size")
	runs := flag.Int("runs", 5, "runs per case (medians are reported)")
	dur := flag.Duration("duration", 5*time.Second, "time per run")
	only := flag.String("cases", "", "comma-separated case names to run, e.g. QD16,QD64 (a name matches when it contains one; default all)")
	flag.Parse()

	if *dir == "" {
		base := "/work"
		if _, err := os.Stat(base); err != nil {
			base = os.TempDir()
		}
		d, err := os.MkdirTemp(base, "agbench-bench-disk-")
		check(err)
		*dir = d
		defer os.RemoveAll(d)
	}
	file := filepath.Join(*dir, "bench.dat")
	res := filepath.Join(*dir, "results")
	fmt.Printf("creating %s (%s) ...\n", file, *size)
	out, err := exec.Command(*bin, "disk", file, "--size", *size, "--keep", "--duration", "1s", "--warmup", "0s", "--results", res).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s\n", out)
		check(err)
	}
	defer os.Remove(file)
	st, err := os.Stat(file)
	check(err)

	cases := []benchCase{
		{"4K randread QD1", "4K", true, 1}, {"4K randread QD4", "4K", true, 4},
		{"4K randread QD16", "4K", true, 16}, {"4K randread QD64", "4K", true, 64},
		{"128K seqread QD1", "128K", false, 1}, {"128K seqread QD4", "128K", false, 4},
	}
	if *only != "" {
		var keep []benchCase
		for _, c := range cases {
			for _, w := range strings.Split(*only, ",") {
				if w != "" && strings.Contains(c.name, w) {
					keep = append(keep, c)
					break
				}
			}
		}
		if len(keep) == 0 {
			check(fmt.Errorf("-cases %q matches no case", *only))
		}
		cases = keep
	}
	fioS := make([][]sample, len(cases))
	agS := make([][]sample, len(cases))
	for r := 0; r < *runs; r++ {
		for i, c := range cases {
			// Alternate who goes first so a drifting machine favours neither.
			first, second := runFio, runAgbench
			if (r+i)%2 == 1 {
				first, second = runAgbench, runFio
			}
			a := first(c, *fio, *bin, file, st.Size(), res, *dur)
			b := second(c, *fio, *bin, file, st.Size(), res, *dur)
			if (r+i)%2 == 1 {
				a, b = b, a
			}
			fioS[i] = append(fioS[i], a)
			agS[i] = append(agS[i], b)
			fmt.Printf("run %d %-18s fio %8.0f IOPS p99 %7.1f us %5.2f us/IO | agbench %8.0f IOPS p99 %7.1f us %5.2f us/IO\n",
				r+1, c.name, a.iops, a.p99us, a.cpuUsPerIO, b.iops, b.p99us, b.cpuUsPerIO)
		}
	}
	fmt.Printf("\nmedians of %d runs of %s each, interleaved (fio: ioengine=io_uring, direct=1)\n", *runs, *dur)
	fmt.Printf("%-18s %9s %9s %6s | %8s %8s %8s %8s %6s | %7s %7s %6s\n", "case", "fio IOPS", "agb IOPS", "ratio",
		"fio p50", "agb p50", "fio p99", "agb p99", "ratio", "fio cpu", "agb cpu", "ratio")
	for i, c := range cases {
		f, a := median(fioS[i]), median(agS[i])
		fmt.Printf("%-18s %9.0f %9.0f %6.3f | %8.1f %8.1f %8.1f %8.1f %6.3f | %7.2f %7.2f %6.3f\n", c.name, f.iops, a.iops, a.iops/f.iops,
			f.p50us, a.p50us, f.p99us, a.p99us, a.p99us/f.p99us, f.cpuUsPerIO, a.cpuUsPerIO, a.cpuUsPerIO/f.cpuUsPerIO)
	}
	fmt.Println("(latency in us; cpu = user+sys of the whole process per IO, in us)")
	// The disk's speed drifts between runs by more than the tools differ (other tenants of
	// the host); a run's two halves are back to back, in alternating order, so the verdict
	// rests on the median of the per-run ratios.
	fmt.Printf("\nmedian of the per-run ratios (agbench/fio of the same run)\n%-18s %6s %6s %6s | %s\n", "case", "IOPS", "p99", "cpu", "targets")
	for i, c := range cases {
		var rs []sample
		for r := range fioS[i] {
			f, a := fioS[i][r], agS[i][r]
			rs = append(rs, sample{iops: a.iops / f.iops, p99us: a.p99us / f.p99us, cpuUsPerIO: a.cpuUsPerIO / f.cpuUsPerIO})
		}
		m := median(rs)
		ok := "met"
		if m.iops < minIOPSRatio || m.p99us > maxP99Ratio || m.cpuUsPerIO > maxCPURatio {
			ok = "MISSED"
		}
		fmt.Printf("%-18s %6.3f %6.3f %6.3f | %s\n", c.name, m.iops, m.p99us, m.cpuUsPerIO, ok)
	}
	fmt.Printf("(targets: IOPS >= %.2fx, p99 <= %.2fx, cpu <= %.2fx fio)\n", minIOPSRatio, maxP99Ratio, maxCPURatio)
}

func cpuOf(p *os.ProcessState) float64 {
	ru, ok := p.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func runFio(c benchCase, fio, _, file string, size int64, _ string, d time.Duration) sample {
	rw := "read"
	if c.rand {
		rw = "randread"
	}
	cmd := exec.Command(fio, "--name=bench", "--filename="+file, "--size="+strconv.FormatInt(size, 10), "--rw="+rw,
		"--bs="+c.bs, "--direct=1", "--ioengine=io_uring", "--iodepth="+strconv.Itoa(c.qd), "--thread",
		"--runtime="+strconv.Itoa(int(d.Seconds())), "--time_based", "--lat_percentiles=1", "--percentile_list=50:99",
		"--norandommap", "--randrepeat=0", "--output-format=json")
	out, err := cmd.Output()
	check(err)
	var j struct {
		Jobs []struct {
			Read struct {
				IOPS     float64 `json:"iops"`
				TotalIOs float64 `json:"total_ios"`
				Lat      struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"read"`
		} `json:"jobs"`
	}
	check(json.Unmarshal(out, &j))
	r := j.Jobs[0].Read
	return sample{iops: r.IOPS, p50us: r.Lat.Percentile["50.000000"] / 1e3, p99us: r.Lat.Percentile["99.000000"] / 1e3,
		cpuUsPerIO: cpuOf(cmd.ProcessState) / r.TotalIOs * 1e6}
}

func runAgbench(c benchCase, _, bin, file string, _ int64, res string, d time.Duration) sample {
	pattern := "--sequential"
	if c.rand {
		pattern = "--random"
	}
	rd, err := os.MkdirTemp(res, "run-")
	check(err)
	defer os.RemoveAll(rd)
	cmd := exec.Command(bin, "disk", file, "--keep", "-b", c.bs, pattern, "--qd", strconv.Itoa(c.qd),
		"--duration", d.String(), "--warmup", "0s", "--results", rd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s\n", out)
		check(err)
	}
	m, _ := filepath.Glob(filepath.Join(rd, "*-disk", "result.json"))
	if len(m) != 1 {
		check(fmt.Errorf("no result.json under %s", rd))
	}
	r, err := result.Read(m[0])
	check(err)
	var st diskio.StepResult
	check(json.Unmarshal(r.Steps[0].Extra["disk"], &st))
	return sample{iops: st.Total.IOPS, p50us: st.Total.At(50), p99us: st.Total.At(99),
		cpuUsPerIO: cpuOf(cmd.ProcessState) / float64(st.AllIOs) * 1e6}
}

func median(s []sample) sample {
	pick := func(f func(sample) float64) float64 {
		v := make([]float64, len(s))
		for i, x := range s {
			v[i] = f(x)
		}
		return stats.Median(v)
	}
	return sample{pick(func(x sample) float64 { return x.iops }), pick(func(x sample) float64 { return x.p50us }),
		pick(func(x sample) float64 { return x.p99us }), pick(func(x sample) float64 { return x.cpuUsPerIO })}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchdisk:", err)
		os.Exit(1)
	}
}
