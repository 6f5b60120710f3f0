package report

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/stats"
)

// The articles' own tables for results that carry a workload's data in Extra: a seeding's
// steps (step Extra["seed"]: the article's step | duration per variant) and a readahead
// run (run Extra["readahead"]: the STATISTICS IO table). They are keyed on what the result
// holds; the JSON shapes are read here with local types (the report imports no workload).

// seedExtra is the part of a seeding's report (step Extra["seed"]) the table shows.
type seedExtra struct {
	Phases []struct {
		Name    string  `json:"name"`
		Seconds float64 `json:"seconds"`
	} `json:"phases"`
	TotalSeconds       float64 `json:"total_seconds"`
	MBps               float64 `json:"mb_per_s"`
	SenderCPUSeconds   float64 `json:"sender_cpu_seconds"`
	ReceiverCPUSeconds float64 `json:"receiver_cpu_seconds"`
	WireBytes          float64 `json:"wire_bytes"`
	CompressionRatio   float64 `json:"compression_ratio"`
	DiskWriteBytes     float64 `json:"disk_write_bytes"`
}

// seedRows are the table's rows after the steps: label and figure.
var seedRows = []struct {
	label string
	get   func(seedExtra) float64
}{
	{"total s", func(x seedExtra) float64 { return x.TotalSeconds }},
	{"MB/s", func(x seedExtra) float64 { return x.MBps }},
	{"sender CPU s", func(x seedExtra) float64 { return x.SenderCPUSeconds }},
	{"receiver CPU s", func(x seedExtra) float64 { return x.ReceiverCPUSeconds }},
	{"wire MB", func(x seedExtra) float64 { return x.WireBytes / 1e6 }},
	{"compression ratio", func(x seedExtra) float64 { return x.CompressionRatio }},
	{"device write MB (all)", func(x seedExtra) float64 { return x.DiskWriteBytes / 1e6 }},
}

// SeedTable is the seeding article's table: one row per step (phase) with its duration in
// seconds per variant (median of the repeats), then rate, CPU, bytes on the wire and the
// compression ratio. Empty when no step carries Extra["seed"].
func (e *Experiment) SeedTable() Table {
	t := Table{Name: e.slug() + "-seed", Title: e.name() + ": seeding steps per variant (seconds, median of repeats)", Columns: []string{"step"}}
	var phases []string
	byVariant := make([][]seedExtra, len(e.Variants))
	for i, v := range e.Variants {
		for _, c := range v.Cells {
			if c == nil {
				continue
			}
			for _, st := range c.Steps {
				raw, ok := st.Extra["seed"]
				var x seedExtra
				if !ok || json.Unmarshal(raw, &x) != nil {
					continue
				}
				byVariant[i] = append(byVariant[i], x)
				for _, p := range x.Phases {
					if p.Name != "" && !slices.Contains(phases, p.Name) {
						phases = append(phases, p.Name)
					}
				}
			}
		}
	}
	var shown []int
	for i, xs := range byVariant {
		if len(xs) > 0 {
			shown = append(shown, i)
			name := e.Variants[i].Name
			if name == "" {
				name = "seeding"
			}
			t.Columns = append(t.Columns, name)
		}
	}
	if len(shown) == 0 {
		return t
	}
	row := func(label string, get func(seedExtra) (float64, bool)) {
		r := []Cell{txt(label)}
		for _, i := range shown {
			var vs []float64
			for _, x := range byVariant[i] {
				if v, ok := get(x); ok {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				r = append(r, blank())
			} else {
				r = append(r, num(stats.Median(vs)))
			}
		}
		t.add(r...)
	}
	for _, ph := range phases {
		row(ph, func(x seedExtra) (float64, bool) {
			for _, p := range x.Phases {
				if p.Name == ph {
					return p.Seconds, true
				}
			}
			return 0, false
		})
	}
	for _, sr := range seedRows {
		row(sr.label, func(x seedExtra) (float64, bool) { return sr.get(x), true })
	}
	return t
}

// readaheadExtra is a readahead run's table (run Extra["readahead"]).
type readaheadExtra struct {
	Table []struct {
		Query string           `json:"query"`
		Title string           `json:"title"`
		Node  string           `json:"node"`
		Off   readaheadFigures `json:"off"`
		On    readaheadFigures `json:"on"`
		Ratio float64          `json:"ratio"`
	} `json:"table"`
}

type readaheadFigures struct {
	Runs      int     `json:"runs"`
	ElapsedMs float64 `json:"elapsed_ms"`
	SharedHit float64 `json:"shared_hit"`
	Read      float64 `json:"shared_read"`
	IOOps     float64 `json:"io_ops"`
	AvgIOKB   float64 `json:"avg_io_kb"`
	IOReadMs  float64 `json:"io_read_ms"`
}

// readaheadColumns are each side's columns of the STATISTICS IO table.
var readaheadColumns = []string{"hits", "reads", "IO ops", "avg IO KB", "IO time ms", "elapsed ms"}

func (f readaheadFigures) cells() []Cell {
	if f.Runs == 0 {
		return []Cell{blank(), blank(), blank(), blank(), blank(), blank()}
	}
	return []Cell{num(f.SharedHit), num(f.Read), num(f.IOOps), num(f.AvgIOKB), num(f.IOReadMs), num(f.ElapsedMs)}
}

// ReadaheadTable is the readahead article's STATISTICS IO table: per query, prefetch off
// and on (medians of the runs), the ratio of their elapsed times and the plan node. Empty
// when no run carries Extra["readahead"].
func (e *Experiment) ReadaheadTable() Table {
	t := Table{Name: e.slug() + "-statistics-io", Title: e.name() + ": STATISTICS IO per query, prefetch off and on (medians)",
		Groups:  []Group{{Name: "prefetch off", Span: len(readaheadColumns)}, {Name: "prefetch on", Span: len(readaheadColumns)}},
		Columns: append(append(append([]string{"query"}, readaheadColumns...), readaheadColumns...), "ratio off/on", "plan node")}
	for _, r := range e.Runs {
		raw, ok := r.Result.Extra["readahead"]
		var x readaheadExtra
		if !ok || json.Unmarshal(raw, &x) != nil {
			continue
		}
		for _, q := range x.Table {
			name := q.Title
			if name == "" {
				name = q.Query
			}
			if len(e.Runs) > 1 {
				name = r.Label + ": " + name
			}
			row := append([]Cell{txt(name)}, q.Off.cells()...)
			row = append(row, q.On.cells()...)
			ratio := blank()
			if q.Ratio > 0 {
				ratio = num(q.Ratio)
			}
			t.add(append(row, ratio, txt(strings.TrimSpace(q.Node)))...)
		}
	}
	return t
}
