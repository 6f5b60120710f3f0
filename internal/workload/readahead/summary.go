package readahead

import (
	"github.com/agbench/agbench/internal/measure"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// Figures are the medians of one query's runs on one side of the comparison.
type Figures = result.ReadaheadFigures

// Row is one query's line of the table: prefetch off and on, and the ratio of their
// elapsed times (off / on: how many times faster prefetching made the query).
type Row = result.ReadaheadRow

// Summarize makes the table's rows from measurements, in the order of queries.
func Summarize(queries []Query, ms []Measurement) []Row {
	var rows []Row
	for _, q := range queries {
		r := Row{Query: q.Name, Title: q.Title, Node: q.Node}
		r.Off = figures(ms, q.Name, false)
		r.On = figures(ms, q.Name, true)
		if r.Off.Runs == 0 && r.On.Runs == 0 {
			continue
		}
		if r.On.ElapsedMs > 0 {
			r.Ratio = r.Off.ElapsedMs / r.On.ElapsedMs
		}
		rows = append(rows, r)
	}
	return rows
}

func figures(ms []Measurement, query string, prefetch bool) Figures {
	var el, hit, rd, ops, kb, iot, dev []float64
	f := Figures{NodeOK: true}
	for _, m := range ms {
		if m.Query != query || m.Prefetch != prefetch {
			continue
		}
		f.Runs++
		el = append(el, m.ElapsedMs)
		hit = append(hit, float64(m.Plan.SharedHit))
		rd = append(rd, float64(m.Plan.SharedRead))
		ops = append(ops, float64(m.IOOps))
		kb = append(kb, m.AvgIOKB())
		iot = append(iot, m.Plan.IOReadMs)
		dev = append(dev, m.DevMs)
		if m.Cold {
			f.Cold++
		}
		f.NodeOK = f.NodeOK && m.NodeOK
		f.Plan = m.Plan.Plan()
	}
	f.ElapsedMs, f.SharedHit, f.Read = stats.Median(el), stats.Median(hit), stats.Median(rd)
	f.IOOps, f.AvgIOKB, f.IOReadMs, f.DeviceMs = stats.Median(ops), stats.Median(kb), stats.Median(iot), stats.Median(dev)
	return f
}

// ExtraKey is the key of this workload's data in a result's Extra maps.
const ExtraKey = result.ExtraReadahead

// RunExtra is the run-level data this workload keeps in result.Extra: the conditions and
// the table.
type RunExtra = result.ReadaheadRun

// Step turns a measurement into a result step: one operation ("query") whose latency is the
// elapsed time, and the STATISTICS IO figures as counters.
func (m Measurement) Step(index, point int) (result.Step, error) {
	h := measure.NewHistogram()
	us := int64(m.ElapsedMs * 1000)
	_ = h.RecordValue(max(us, 1))
	hist, err := result.NewHist(h)
	if err != nil {
		return result.Step{}, err
	}
	prefetch := "off"
	if m.Prefetch {
		prefetch = "on"
	}
	cold := 0.0
	if m.Cold {
		cold = 1
	}
	s := result.Step{
		Index: index, Point: point, Variant: Variant(m.Prefetch), Repeat: m.Repeat,
		Params: map[string]string{"query": m.Query, "prefetch": prefetch},
		VUs:    1, Iterations: 1,
		Window:   result.Window{Start: m.Start, End: m.Start.Add(msDuration(m.ElapsedMs))},
		Ops:      map[string]*result.Op{"query": {Count: 1, Rows: m.Plan.Rows, Latency: hist}},
		Complete: true,
		Counters: map[string]float64{
			"elapsed_ms": m.ElapsedMs, "execution_ms": m.Plan.ExecutionMs,
			result.BufferHits: float64(m.Plan.SharedHit), result.BufferReads: float64(m.Plan.SharedRead),
			"io_ops": float64(m.IOOps), "io_bytes": float64(m.IOBytes), "avg_io_kb": m.AvgIOKB(),
			"io_read_ms": m.Plan.IOReadMs, "cold": cold,
		},
	}
	if m.DevOps > 0 || m.DevBytes > 0 {
		s.Counters["device_read_ops"] = float64(m.DevOps)
		s.Counters["device_read_bytes"] = float64(m.DevBytes)
		s.Counters["device_read_ms"] = m.DevMs
	}
	if m.ColdAsked && !m.Cold {
		s.Warnings = append(s.Warnings, "asked cold, but the run read nothing from storage: it was warm")
	}
	if err := s.SetExtra(ExtraKey, m.Plan); err != nil {
		return result.Step{}, err
	}
	return s, nil
}
