package report

import (
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// The articles' own tables for results that carry a workload's section in Extra: a
// seeding's steps (result.Seeding: the article's step | duration per variant) and a
// readahead run (result.ReadaheadRun: the STATISTICS IO table). They are keyed on what the
// result holds, and read with the sections' own types, declared once in internal/result.

// seedRows are the table's rows after the steps: label and figure.
var seedRows = []struct {
	label string
	get   func(*result.Seeding) float64
}{
	{"total s", func(x *result.Seeding) float64 { return x.TotalSeconds }},
	{"MB/s", func(x *result.Seeding) float64 { return x.MBps }},
	{"sender CPU s", func(x *result.Seeding) float64 { return x.SenderCPUSeconds }},
	{"receiver CPU s", func(x *result.Seeding) float64 { return x.ReceiverCPUSeconds }},
	{"wire MB", func(x *result.Seeding) float64 { return float64(x.WireBytes) / 1e6 }},
	{"compression ratio", func(x *result.Seeding) float64 { return x.CompressionRatio }},
	{"device write MB (all)", func(x *result.Seeding) float64 { return float64(x.DiskWriteBytes) / 1e6 }},
}

// SeedTable is the seeding article's table: one row per step (phase) with its duration in
// seconds per variant (median of the repeats), then rate, CPU, bytes on the wire and the
// compression ratio. Empty when no step carries a seeding section.
func (e *Experiment) SeedTable() Table {
	t := Table{Name: e.slug() + "-seed", Title: e.name() + ": seeding steps per variant (seconds, median of repeats)", Columns: []string{"step"}}
	var phases []string
	byVariant := make([][]*result.Seeding, len(e.Variants))
	for i, v := range e.Variants {
		for _, c := range v.Cells {
			if c == nil {
				continue
			}
			for _, x := range c.Seedings {
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
	row := func(label string, get func(*result.Seeding) (float64, bool)) {
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
		row(ph, func(x *result.Seeding) (float64, bool) {
			for _, p := range x.Phases {
				if p.Name == ph {
					return p.Seconds, true
				}
			}
			return 0, false
		})
	}
	for _, sr := range seedRows {
		row(sr.label, func(x *result.Seeding) (float64, bool) { return sr.get(x), true })
	}
	return t
}

// readaheadColumns are each side's columns of the STATISTICS IO table.
var readaheadColumns = []string{"hits", "reads", "IO ops", "avg IO KB", "IO time ms", "elapsed ms"}

func readaheadCells(f result.ReadaheadFigures) []Cell {
	if f.Runs == 0 {
		return []Cell{blank(), blank(), blank(), blank(), blank(), blank()}
	}
	return []Cell{num(f.SharedHit), num(f.Read), num(f.IOOps), num(f.AvgIOKB), num(f.IOReadMs), num(f.ElapsedMs)}
}

// ReadaheadTable is the readahead article's STATISTICS IO table: per query, prefetch off
// and on (medians of the runs), the ratio of their elapsed times and the plan node. Empty
// when no run carries a readahead section.
func (e *Experiment) ReadaheadTable() Table {
	t := Table{Name: e.slug() + "-statistics-io", Title: e.name() + ": STATISTICS IO per query, prefetch off and on (medians)",
		Groups:  []Group{{Name: "prefetch off", Span: len(readaheadColumns)}, {Name: "prefetch on", Span: len(readaheadColumns)}},
		Columns: append(append(append([]string{"query"}, readaheadColumns...), readaheadColumns...), "ratio off/on", "plan node")}
	for _, r := range e.Runs {
		if r.Readahead == nil {
			continue
		}
		for _, q := range r.Readahead.Table {
			name := q.Title
			if name == "" {
				name = q.Query
			}
			if len(e.Runs) > 1 {
				name = r.Label + ": " + name
			}
			row := append([]Cell{txt(name)}, readaheadCells(q.Off)...)
			row = append(row, readaheadCells(q.On)...)
			ratio := blank()
			if q.Ratio > 0 {
				ratio = num(q.Ratio)
			}
			t.add(append(row, ratio, txt(strings.TrimSpace(q.Node)))...)
		}
	}
	return t
}
