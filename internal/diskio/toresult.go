package diskio

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/agbench/agbench/internal/result"
)

// microsHist re-bins a nanosecond histogram into microseconds, the result file's unit.
func microsHist(h *hdr.Histogram) *hdr.Histogram {
	out := hdr.New(1, histHighest/1000, histDigits)
	if h == nil {
		return out
	}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out.RecordValues(max((b.From+b.To)/2/1000, 1), b.Count)
		}
	}
	return out
}

// FillResult writes the run into the common result schema: one step per step of the run
// (ops "read" and "write" with their HDR histograms in microseconds, counters, per-second
// IOPS, the tester's CPU), everything else under Extra["disk"] (result.ExtraDisk).
func FillResult(r *Report, res *result.Result) error {
	if len(r.Steps) > 0 {
		w := r.Steps[0].Workload
		res.Meta.Config = map[string]any{"file": r.File.Path, "file_bytes": r.File.Size, "workload": w, "description": w.Describe()}
		if r.Sweep != nil {
			res.Meta.Config["sweep"] = r.Sweep
		}
		res.Meta.Seed = int64(w.Seed)
	}
	for i, s := range r.Steps {
		st, err := resultStep(s, i)
		if err != nil {
			return err
		}
		res.Steps = append(res.Steps, st)
		res.Warnings = append(res.Warnings, stepWarnings(s)...)
	}
	return SetExtra(r, res)
}

// SetExtra (re)writes the run-level Extra["disk"], e.g. once the marks are known.
func SetExtra(r *Report, res *result.Result) error {
	return res.SetExtra(result.ExtraDisk, r.Extra())
}

func stepWarnings(s *StepResult) []string {
	var out []string
	for _, w := range s.Warnings {
		out = append(out, fmt.Sprintf("threads %d, QD %d: %s", s.Workload.Threads, s.Workload.QD, w))
	}
	return out
}

func resultStep(s *StepResult, i int) (result.Step, error) {
	w := s.Workload
	st := result.Step{Index: i, Point: i, VUs: w.Outstanding(), Rate: w.Rate, RampupSeconds: w.Warmup.Seconds(),
		Window:   result.Window{Start: s.Start, End: s.Start.Add(time.Duration(s.Seconds * float64(time.Second)))},
		Ops:      map[string]*result.Op{},
		Complete: s.Complete, LateStarts: s.Late, Warnings: s.Warnings,
		Params: map[string]string{"threads": fmt.Sprint(w.Threads), "qd": fmt.Sprint(w.QD), "outstanding": fmt.Sprint(w.Outstanding()),
			"engine": s.Engine, "workload": w.Describe()},
	}
	if !s.Complete {
		st.IncompleteReason = "interrupted"
	} else if s.CutShort {
		st.Complete, st.IncompleteReason = false, "cut short"
	}
	for name, o := range map[string]*OpStats{"read": &s.Read, "write": &s.Write} {
		if o.IOs == 0 && ((name == "read" && w.WritePct == 100) || (name == "write" && w.WritePct == 0)) {
			continue
		}
		h, err := result.NewHist(microsHist(o.Hist))
		if err != nil {
			return st, err
		}
		if h.Count > 0 {
			h.Mean = o.MeanUs // exact (nanoseconds), not the mean of the re-binned buckets
		}
		st.Ops[name] = &result.Op{Count: o.IOs, Bytes: o.Bytes, Latency: h}
	}
	c := map[string]float64{"iops": s.Total.IOPS, "read_iops": s.Read.IOPS, "write_iops": s.Write.IOPS, result.MBps: s.Total.MBps,
		"iops_stddev": s.IOPSStddev, "latency_mean_us": s.Total.MeanUs}
	for _, p := range []struct {
		p    float64
		name string
	}{{99.99, "latency_p99_99_us"}, {99.999, "latency_p99_999_us"}, {99.9999, "latency_p99_9999_us"}} {
		if v := s.Total.At(p.p); v == v {
			c[p.name] = v
		}
	}
	if d := s.Device; d != nil {
		c[result.DeviceIOPS], c[result.DeviceMBps] = d.ReadIOPS+d.WriteIOPS, d.ReadMBps+d.WriteMBps
		c[result.DeviceReadAwaitMs], c[result.DeviceWriteAwaitMs] = d.ReadAwaitMs, d.WriteAwait
		c[result.DeviceAvgQueue], c[result.DeviceUtil] = d.AvgQueue, d.UtilPct/100
	}
	if p := s.Pressure; p != nil {
		c["io_pressure_some"], c["io_pressure_full"] = p.SomePct/100, p.FullPct/100
	}
	c[result.MachineCPUUser], c[result.MachineCPUSystem], c[result.MachineCPUIOWait], c[result.MachineCPUSteal] =
		s.CPU.MachineUserPct/100, s.CPU.MachineSysPct/100, s.CPU.MachineIOWait/100, s.CPU.MachineStealPct/100
	for k, v := range s.OSCounters {
		if _, mine := c[k]; !mine {
			c[k] = v
		}
	}
	st.Counters = c
	st.Series = s.OSSeries
	st.Client = result.ClientCPU{UserSeconds: s.CPU.TesterUserS, SystemSeconds: s.CPU.TesterSysS, PerOpMicros: s.CPU.TesterUsPerIO}
	// The tester's share is of the CPU it may use (affinity, control-group quota), as the
	// runner's is, not of the machine's count.
	st.Client.Cap = result.ReadCPUCap()
	capCores := st.Client.Cap.Cores()
	if capCores <= 0 {
		capCores = float64(s.CPU.Cores)
	}
	if capCores > 0 && s.Seconds > 0 {
		st.Client.Utilisation = (s.CPU.TesterUserS + s.CPU.TesterSysS) / s.Seconds / capCores
	}
	if len(s.PerSecond) > 0 {
		ts := result.TimeSeries{Unit: "ops/s", Start: s.Start}
		for j, v := range s.PerSecond {
			ts.T = append(ts.T, float64(j+1))
			ts.V = append(ts.V, float64(v))
		}
		st.Throughput = map[string]result.TimeSeries{"*": ts}
	}
	err := st.SetExtra(result.ExtraDisk, s)
	return st, err
}
