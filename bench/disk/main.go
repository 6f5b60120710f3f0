// Command disk runs fio and `agbench disk` with the same parameters, interleaved, on one
// test file, and prints IOPS, p50/p99 latency and CPU per IO for both with ratios (medians
// of several short runs, and the median of each run's own ratios, on which the verdict
// rests). `make bench-disk` runs it; it is a benchmark, not a test.
//
// Imports from agbench: only bench/harness, internal/diskio.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/diskio"
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

var allCases = []benchCase{
	{"4K randread QD1", "4K", true, 1}, {"4K randread QD4", "4K", true, 4},
	{"4K randread QD16", "4K", true, 16}, {"4K randread QD64", "4K", true, 64},
	{"128K seqread QD1", "128K", false, 1}, {"128K seqread QD4", "128K", false, 4},
}

type sample struct {
	iops, p50us, p99us, cpuUsPerIO float64
}

func (s sample) IOPS() float64 { return s.iops }
func (s sample) P50() float64  { return s.p50us }
func (s sample) P99() float64  { return s.p99us }
func (s sample) CPU() float64  { return s.cpuUsPerIO }

// bench is one benchmark's settings and its test file.
type bench struct {
	bin, fio, file, results string
	size                    int64
	dur                     time.Duration
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cases, err := pick(*only)
	if err == nil {
		err = run(ctx, *bin, *fio, *dir, *size, *runs, *dur, cases)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench disk:", err)
		os.Exit(1)
	}
}

// pick keeps the cases whose name contains one of the comma-separated words of only.
func pick(only string) ([]benchCase, error) {
	if only == "" {
		return allCases, nil
	}
	var keep []benchCase
	for _, c := range allCases {
		for _, w := range strings.Split(only, ",") {
			if w != "" && strings.Contains(c.name, w) {
				keep = append(keep, c)
				break
			}
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("-cases %q matches no case", only)
	}
	return keep, nil
}

func run(ctx context.Context, bin, fio, dir, size string, runs int, dur time.Duration, cases []benchCase) error {
	if dir == "" {
		base := "/work"
		if _, err := os.Stat(base); err != nil {
			base = os.TempDir()
		}
		d, err := os.MkdirTemp(base, "agbench-bench-disk-")
		if err != nil {
			return err
		}
		dir = d
		defer os.RemoveAll(d)
	}
	b := &bench{bin: bin, fio: fio, file: filepath.Join(dir, "bench.dat"), results: filepath.Join(dir, "results"), dur: dur}
	harness.Header(os.Stdout, "agbench disk against fio")
	fmt.Printf("creating %s (%s) ...\n", b.file, size)
	if _, _, err := harness.Run(ctx, nil, bin, "disk", b.file, "--size", size, "--keep", "--duration", "1s", "--warmup", "0s",
		"--results", b.results); err != nil {
		return err
	}
	defer os.Remove(b.file)
	st, err := os.Stat(b.file)
	if err != nil {
		return err
	}
	b.size = st.Size()
	fioS, agS := make([][]sample, len(cases)), make([][]sample, len(cases))
	for r := 0; r < runs; r++ {
		for i, c := range cases {
			got := map[string]sample{}
			for _, side := range harness.Rotate([]string{"fio", "agbench"}, r+i) {
				if got[side], err = b.measure(ctx, side, c); err != nil {
					return fmt.Errorf("run %d, %s, %s: %w", r+1, c.name, side, err)
				}
			}
			a, g := got["fio"], got["agbench"]
			fioS[i], agS[i] = append(fioS[i], a), append(agS[i], g)
			fmt.Printf("run %d %-18s fio %8.0f IOPS p99 %7.1f us %5.2f us/IO | agbench %8.0f IOPS p99 %7.1f us %5.2f us/IO\n",
				r+1, c.name, a.iops, a.p99us, a.cpuUsPerIO, g.iops, g.p99us, g.cpuUsPerIO)
		}
	}
	report(cases, fioS, agS, runs, dur)
	harness.Footer(os.Stdout)
	return nil
}

func report(cases []benchCase, fioS, agS [][]sample, runs int, dur time.Duration) {
	fmt.Printf("\nmedians of %d runs of %s each, interleaved (fio: ioengine=io_uring, direct=1)\n", runs, dur)
	fmt.Printf("%-18s %9s %9s %6s | %8s %8s %8s %8s %6s | %7s %7s %6s\n", "case", "fio IOPS", "agb IOPS", "ratio",
		"fio p50", "agb p50", "fio p99", "agb p99", "ratio", "fio cpu", "agb cpu", "ratio")
	for i, c := range cases {
		f, a := fioS[i], agS[i]
		fi, ai := harness.Median(f, sample.IOPS), harness.Median(a, sample.IOPS)
		fp, ap := harness.Median(f, sample.P99), harness.Median(a, sample.P99)
		fc, ac := harness.Median(f, sample.CPU), harness.Median(a, sample.CPU)
		fmt.Printf("%-18s %9.0f %9.0f %6.3f | %8.1f %8.1f %8.1f %8.1f %6.3f | %7.2f %7.2f %6.3f\n", c.name, fi, ai, ai/fi,
			harness.Median(f, sample.P50), harness.Median(a, sample.P50), fp, ap, ap/fp, fc, ac, ac/fc)
	}
	fmt.Println("(latency in us; cpu = user+sys of the whole process per IO, in us)")
	// The disk's speed drifts between runs by more than the tools differ (other tenants of
	// the host); a run's two halves are back to back, in alternating order, so the verdict
	// rests on the median of the per-run ratios.
	fmt.Printf("\nmedian of the per-run ratios (agbench/fio of the same run)\n%-18s %6s %6s %6s | %s\n", "case", "IOPS", "p99", "cpu", "targets")
	for i, c := range cases {
		iops, _ := harness.RoundRatio(agS[i], fioS[i], sample.IOPS)
		p99, _ := harness.RoundRatio(agS[i], fioS[i], sample.P99)
		cpu, _ := harness.RoundRatio(agS[i], fioS[i], sample.CPU)
		ok := "met"
		if iops < minIOPSRatio || p99 > maxP99Ratio || cpu > maxCPURatio {
			ok = "MISSED"
		}
		fmt.Printf("%-18s %6.3f %6.3f %6.3f | %s\n", c.name, iops, p99, cpu, ok)
	}
	fmt.Printf("(targets: IOPS >= %.2fx, p99 <= %.2fx, cpu <= %.2fx fio)\n", minIOPSRatio, maxP99Ratio, maxCPURatio)
}

func (b *bench) measure(ctx context.Context, side string, c benchCase) (sample, error) {
	if side == "fio" {
		return b.runFio(ctx, c)
	}
	return b.runAgbench(ctx, c)
}

func (b *bench) runFio(ctx context.Context, c benchCase) (sample, error) {
	rw := "read"
	if c.rand {
		rw = "randread"
	}
	out, cpu, err := harness.Run(ctx, nil, b.fio, "--name=bench", "--filename="+b.file, "--size="+strconv.FormatInt(b.size, 10),
		"--rw="+rw, "--bs="+c.bs, "--direct=1", "--ioengine=io_uring", "--iodepth="+strconv.Itoa(c.qd), "--thread",
		"--runtime="+strconv.Itoa(int(b.dur.Seconds())), "--time_based", "--lat_percentiles=1", "--percentile_list=50:99",
		"--norandommap", "--randrepeat=0", "--output-format=json")
	if err != nil {
		return sample{}, err
	}
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
	if err := json.Unmarshal(out, &j); err != nil || len(j.Jobs) == 0 {
		return sample{}, fmt.Errorf("fio's output: %v\n%s", err, out)
	}
	r := j.Jobs[0].Read
	return sample{iops: r.IOPS, p50us: r.Lat.Percentile["50.000000"] / 1e3, p99us: r.Lat.Percentile["99.000000"] / 1e3,
		cpuUsPerIO: float64(cpu.Microseconds()) / r.TotalIOs}, nil
}

func (b *bench) runAgbench(ctx context.Context, c benchCase) (sample, error) {
	pattern := "--sequential"
	if c.rand {
		pattern = "--random"
	}
	rd, err := os.MkdirTemp(b.results, "run-")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(rd)
	_, cpu, err := harness.Run(ctx, nil, b.bin, "disk", b.file, "--keep", "-b", c.bs, pattern, "--qd", strconv.Itoa(c.qd),
		"--duration", b.dur.String(), "--warmup", "0s", "--results", rd)
	if err != nil {
		return sample{}, err
	}
	r, err := harness.ReadResult(rd, "disk")
	if err != nil {
		return sample{}, err
	}
	var st diskio.StepResult
	if err := json.Unmarshal(r.Steps[0].Extra["disk"], &st); err != nil {
		return sample{}, fmt.Errorf("the disk step: %w", err)
	}
	return sample{iops: st.Total.IOPS, p50us: st.Total.At(50), p99us: st.Total.At(99),
		cpuUsPerIO: float64(cpu.Microseconds()) / float64(st.AllIOs)}, nil
}
