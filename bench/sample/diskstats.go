package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/agbench/agbench/bench/harness"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/sample"
	"github.com/agbench/agbench/internal/stats"
)

// diskstatsVsFio compares the OS sampler's view of the device with fio's own "Disk stats"
// for the same job: random 4 KiB O_DIRECT reads and writes on a file on the disk (/var/tmp).
// It prints the device IOs each counted and both utilisations, and their medians.
func diskstatsVsFio(ctx context.Context, runs, secs int) error {
	fio, err := exec.LookPath("fio")
	if err != nil {
		return fmt.Errorf("no fio: %w", err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "agbench-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dev, err := sample.DeviceForPath("/sys", dir)
	if err != nil {
		return err
	}
	o, err := sample.NewOSStep(sample.OSConfig{Paths: []string{dir}}, 500*time.Millisecond)
	if err != nil {
		return err
	}
	args := []string{"--name=cmp", "--filename=" + filepath.Join(dir, "f"), "--size=256M", "--direct=1", "--rw=randrw",
		"--bs=4k", "--iodepth=8", "--ioengine=psync", "--numjobs=2", "--time_based", "--group_reporting"}
	if _, _, err := harness.Run(ctx, nil, fio, append(args, "--runtime=1")...); err != nil { // lay the file out first
		return err
	}
	// fio: "vda: ios=12345/6789, merge=..., ticks=..., in_queue=..., util=98.76%"
	statsRE := regexp.MustCompile(regexp.QuoteMeta(dev) + `: ios=(\d+)/(\d+).*util=([0-9.]+)%`)
	var ours, theirs, ourUtil, theirUtil []float64
	for i := 0; i < runs; i++ {
		st := &result.Step{Window: result.Window{Start: time.Now()}}
		if err := o.Start(ctx, st); err != nil {
			return err
		}
		out, _, err := harness.Run(ctx, nil, fio, append(args, "--runtime="+strconv.Itoa(secs))...)
		if err != nil {
			return err
		}
		st.Window.End = time.Now()
		if err := o.Stop(ctx, st); err != nil {
			return err
		}
		m := statsRE.FindSubmatch(out)
		if m == nil {
			return fmt.Errorf("no disk stats for %s in fio's output:\n%s", dev, out)
		}
		r, _ := strconv.ParseFloat(string(m[1]), 64)
		w, _ := strconv.ParseFloat(string(m[2]), 64)
		u, _ := strconv.ParseFloat(string(m[3]), 64)
		theirs, theirUtil = append(theirs, r+w), append(theirUtil, u/100)
		ours = append(ours, st.Counters["disk."+dev+".iops"]*st.Window.Seconds())
		ourUtil = append(ourUtil, st.Counters["disk."+dev+".util"])
	}
	fmt.Printf("device %s, %d fio jobs of %d s: IOs counted by the sampler %.0f (util %.2f), by fio %.0f (util %.2f)\n",
		dev, runs, secs, ours, ourUtil, theirs, theirUtil)
	fmt.Printf("medians: the sampler %.0f IOs, util %.2f; fio %.0f IOs, util %.2f (the sampler's window is a little longer than fio's job)\n",
		stats.Median(ours), stats.Median(ourUtil), stats.Median(theirs), stats.Median(theirUtil))
	return nil
}
