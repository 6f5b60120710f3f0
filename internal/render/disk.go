package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agbench/agbench/internal/result/diskrun"
	"github.com/agbench/agbench/internal/table"
	"github.com/agbench/agbench/internal/units"
)

// diskMs is a latency in microseconds as the disk tables show it, in milliseconds with
// the digits that matter ("-" when not reported).
func diskMs(us float64) string {
	switch {
	case us != us: // NaN
		return "-"
	case us < 10:
		return fmt.Sprintf("%.4f", us/1e3)
	case us < 1e5:
		return fmt.Sprintf("%.3f", us/1e3)
	default:
		return fmt.Sprintf("%.1f", us/1e3)
	}
}

// Disk prints a storage test as tables shaped like the storage article's and DiskSpd's:
// the file, the workload, one step's detail or a sweep's table with its marks, the
// verification and the notes.
func Disk(w io.Writer, r *diskrun.Report) {
	fmt.Fprintf(w, "file     %s (%s of data%s)\n", r.File.Path, units.FormatBytes(r.File.RegionLen()), map[bool]string{true: ", created by this run", false: ""}[r.File.Created])
	if r.Device != "" {
		fmt.Fprintf(w, "device   %s\n", r.Device)
	}
	if len(r.Steps) > 0 {
		s := r.Steps[0]
		fmt.Fprintf(w, "workload %s\n", s.Workload.Describe())
		if r.Sweep != nil {
			fmt.Fprintf(w, "sweep    %s = %s\n", r.Sweep.Key, joinInts(r.Sweep.Values))
		}
		span := s.Workload.Duration.String()
		if s.Workload.IOs > 0 {
			span = fmt.Sprintf("%d IOs (at most %s)", s.Workload.IOs, s.Workload.Duration)
		}
		fmt.Fprintf(w, "engine   %s; %s measured after %s warm-up per step\n", s.Engine, span, s.Workload.Warmup)
	}
	if len(r.Steps) == 1 {
		diskDetail(w, r.Steps[0], r.Analysed)
	} else if len(r.Steps) > 1 {
		diskSweep(w, r)
	}
	if r.Verify != nil {
		v := r.Verify
		if v.BadCount == 0 {
			fmt.Fprintf(w, "\nverify   %d blocks of %s read back: all match their checksums\n", v.Checked, units.FormatBytesExact(v.Unit))
		} else {
			fmt.Fprintf(w, "\nverify   %d of %d blocks of %s DIFFER; first at offsets %s\n", v.BadCount, v.Checked, units.FormatBytesExact(v.Unit), diskOffsets(v.Bad, 10))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func diskOffsets(o []int64, n int) string {
	var s []string
	for i, x := range o {
		if i == n {
			s = append(s, "...")
			break
		}
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

func diskSweep(w io.Writer, r *diskrun.Report) {
	fmt.Fprintln(w)
	tw := table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "threads\tQD\tIOPS\tMB/s\tmean ms\tp50\tp99\tp99.9\tIOPS sd\tL=X*W\t|\tdev IOPS\tdev MB/s\tawait ms\tqueue\tutil%\tio psi%\t|\tcpu%\tus/IO\tmark\t")
	for i, s := range r.Steps {
		mark := ""
		if m := r.Marks; m != nil {
			var names []string
			for _, x := range []struct {
				row  int
				name string
			}{{m.Characteristic, "characteristic"}, {m.Efficient, "efficient"}, {m.Knee, "KNEE"}, {m.Saturation, "saturation"}} {
				if x.row == i {
					names = append(names, x.name)
				}
			}
			mark = strings.Join(names, ",")
		}
		l := "-"
		if s.Little.Known {
			l = fmt.Sprintf("%.2f", s.Little.Measured)
			if !s.Little.OK {
				l += "!"
			}
		}
		dev := "-\t-\t-\t-\t-"
		if d := s.Device; d != nil {
			await := d.ReadAwaitMs
			if s.Workload.WritePct > 50 {
				await = d.WriteAwait
			}
			dev = fmt.Sprintf("%.0f\t%.1f\t%.3f\t%.2f\t%.0f", d.ReadIOPS+d.WriteIOPS, d.ReadMBps+d.WriteMBps, await, d.AvgQueue, d.UtilPct)
		}
		psi := "-"
		if s.Pressure != nil {
			psi = fmt.Sprintf("%.1f", s.Pressure.SomePct)
		}
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%.0f\t%s\t|\t%s\t%s\t|\t%.0f\t%.1f\t%s\t\n",
			s.Workload.Threads, s.Workload.QD, s.Total.IOPS, s.Total.MBps, diskMs(s.Total.MeanUs), diskMs(s.Total.At(50)),
			diskMs(s.Total.At(99)), diskMs(s.Total.At(99.9)), s.IOPSStddev, l, dev, psi, s.CPU.TesterPct, s.CPU.TesterUsPerIO, mark)
	}
	tw.Flush()
	if m := r.Marks; m != nil {
		diskMarks(w, r, m)
	}
	for _, s := range r.Steps {
		for _, wn := range s.Warnings {
			if r.Analysed && diskrun.SharedWarning(wn) {
				continue
			}
			fmt.Fprintf(w, "warning [threads %d, QD %d]: %s\n", s.Workload.Threads, s.Workload.QD, wn)
		}
	}
}

func diskMarks(w io.Writer, r *diskrun.Report, m *diskrun.Marks) {
	row := func(i int) *diskrun.StepResult {
		if i < 0 || i >= len(r.Steps) {
			return nil
		}
		return r.Steps[i]
	}
	c := row(m.Characteristic)
	if c == nil {
		return
	}
	fmt.Fprintf(w, "\ncharacteristic latency %s ms at %d outstanding (%.0f IOPS)\n", diskMs(c.Total.MeanUs), c.Workload.Outstanding(), c.Total.IOPS)
	line := func(name string, s *diskrun.StepResult) {
		fmt.Fprintf(w, "%-22s %d outstanding: %.0f IOPS, %.1f MB/s at %s ms mean, %s ms p99 (%.1fx characteristic)\n", name,
			s.Workload.Outstanding(), s.Total.IOPS, s.Total.MBps, diskMs(s.Total.MeanUs), diskMs(s.Total.At(99)), s.Total.MeanUs/c.Total.MeanUs)
	}
	if s := row(m.Efficient); s != nil {
		line("most efficient", s)
	}
	if s := row(m.Knee); s != nil {
		line("knee", s)
	} else if m.RisingAtEnd {
		fmt.Fprintln(w, "knee                   not reached: IOPS still rise at the highest load; sweep further")
	} else {
		fmt.Fprintln(w, "knee                   none found")
	}
	if s := row(m.Saturation); s != nil {
		line("saturation", s)
	}
	fmt.Fprintf(w, "(%s)\n", m.Method)
}

// writeDetail writes one step as DiskSpd does: totals, per-thread lines, the latency
// table, then the device's view, IO pressure, CPU and warnings (those the analysis also
// gives left to it when analysed).
func diskDetail(w io.Writer, s *diskrun.StepResult, analysed bool) {
	mark := map[bool]string{true: "", false: " (INCOMPLETE)"}[s.Complete]
	if s.CutShort {
		mark = fmt.Sprintf(" (CUT SHORT: %d of %d IOs)", s.Total.IOs, s.Workload.IOs)
	}
	fmt.Fprintf(w, "\n%.2f s measured%s\n\n", s.Seconds, mark)
	tw := table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "thread\tbytes\tIOs\tMB/s\tIOPS\treads\twrites\tmean ms\t")
	for _, t := range s.Threads {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.2f\t%.0f\t%d\t%d\t%s\t\n", t.Thread, t.Bytes, t.IOs, t.MBps, t.IOPS, t.Reads, t.Writes, diskMs(t.MeanUs))
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%.2f\t%.0f\t%d\t%d\t%s\t\n", s.Total.Bytes, s.Total.IOs, s.Total.MBps, s.Total.IOPS, s.Read.IOs, s.Write.IOs, diskMs(s.Total.MeanUs))
	tw.Flush()
	fmt.Fprintf(w, "IOPS standard deviation over 1 s intervals: %.0f\n", s.IOPSStddev)
	switch lc := s.Little; {
	case !lc.Known && lc.NotJudged != "":
		fmt.Fprintf(w, "Little's law: – (not judged: %s)\n\n", lc.NotJudged)
	case !lc.Known:
		fmt.Fprintln(w)
	case lc.Applies:
		fmt.Fprintf(w, "Little's law: IOPS x mean latency = %.2f in flight vs %d outstanding (ratio %.2f)%s\n\n", lc.Measured, s.Workload.Outstanding(), 1+lc.Deviation, map[bool]string{true: "", false: " MISMATCH"}[lc.OK])
	default:
		fmt.Fprintf(w, "Little's law: IOPS x mean latency = %.2f in flight (not checked: a fixed rate does not keep %d outstanding)\n\n", lc.Measured, s.Workload.Outstanding())
	}

	tw = table.NewWriter(w, table.Right)
	fmt.Fprintln(tw, "%-ile\tread (ms)\twrite (ms)\ttotal (ms)\t")
	for _, p := range diskrun.Percentiles {
		name := fmt.Sprintf("%g", p)
		switch p {
		case 0:
			name = "min"
		case 100:
			name = "max"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, diskMs(s.Read.At(p)), diskMs(s.Write.At(p)), diskMs(s.Total.At(p)))
	}
	fmt.Fprintf(tw, "mean\t%s\t%s\t%s\t\n", diskMsOr(s.Read), diskMsOr(s.Write), diskMsOr(s.Total))
	tw.Flush()

	if d := s.Device; d != nil {
		fmt.Fprintf(w, "\ndevice %s (the block layer's view, /proc/diskstats; includes any other IO on it)\n", d.Name)
		fmt.Fprintf(w, "  read  %.0f IOPS  %.2f MB/s  await %.3f ms\n  write %.0f IOPS  %.2f MB/s  await %.3f ms\n  queue %.2f  util %.0f%%\n",
			d.ReadIOPS, d.ReadMBps, d.ReadAwaitMs, d.WriteIOPS, d.WriteMBps, d.WriteAwait, d.AvgQueue, d.UtilPct)
	}
	if p := s.Pressure; p != nil {
		fmt.Fprintf(w, "IO pressure: some %.1f%%  full %.1f%% of the window\n", p.SomePct, p.FullPct)
	}
	c := s.CPU
	fmt.Fprintf(w, "CPU tester: %.1f%% of one CPU (user %.2f s, sys %.2f s), %.2f us per IO; machine: user %.1f%% sys %.1f%% iowait %.1f%% steal %.1f%% idle %.1f%%\n",
		c.TesterPct, c.TesterUserS, c.TesterSysS, c.TesterUsPerIO, c.MachineUserPct, c.MachineSysPct, c.MachineIOWait, c.MachineStealPct, c.MachineIdlePct)
	for _, wn := range s.Warnings {
		if analysed && diskrun.SharedWarning(wn) {
			continue
		}
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
}

func diskMsOr(o diskrun.OpStats) string {
	if o.IOs == 0 {
		return "-"
	}
	return diskMs(o.MeanUs)
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}
