package report

import (
	"slices"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/render"
	"github.com/agbench/agbench/internal/result"
)

// NodeHostsTable is each node's own host at each step, as its node_exporter saw it: the
// terminal's table (render.NodeHostRows), a figure not read "–" with why in the last
// column, and, when some nodes' exporters describe one machine or a node has a budget of
// its own, what its host is ("its host"). Empty when no step read a node's host.
func (e *Experiment) NodeHostsTable() Table {
	t := Table{Name: e.slug() + "-hosts"}
	type row struct {
		run  *Run
		rows []render.NodeHostRow
	}
	var all []row
	var every []render.NodeHostRow
	variants, notes, machines := false, false, false
	for _, r := range e.Runs {
		rows, err := render.NodeHostRows(r.Result.Steps)
		if err != nil || len(rows) == 0 { // a section that does not decode fails the report where it is read first
			continue
		}
		all = append(all, row{r, rows})
		every = append(every, rows...)
		for _, x := range rows {
			variants = variants || x.Step.Variant != ""
			notes = notes || len(render.NodeHostAbsences(x.Host)) > 0
			machines = machines || render.NodeHostMachine(x) != ""
		}
	}
	through, _ := render.NodeHostSources(every)
	t.Title = e.name() + ": " + render.NodeHostsTitle(through)
	if len(all) == 0 {
		return t
	}
	if len(e.Runs) > 1 {
		t.Columns = append(t.Columns, "run")
	}
	if variants {
		t.Columns = append(t.Columns, "variant")
	}
	t.Columns = append(append(t.Columns, e.LoadName), render.NodeHostColumns...)
	t.Columns = append(t.Columns, "read from")
	if machines {
		t.Columns = append(t.Columns, "its host")
	}
	if notes {
		t.Columns = append(t.Columns, "not read")
	}
	for _, a := range all {
		for _, x := range a.rows {
			var cells []Cell
			if len(e.Runs) > 1 {
				cells = append(cells, txt(a.run.Label))
			}
			if variants {
				cells = append(cells, txt(x.Step.Variant))
			}
			cells = append(cells, num(float64(x.Step.Concurrency())))
			for _, c := range x.Cells {
				if c.Value == nil {
					cells = append(cells, txt(c.Text))
					continue
				}
				cells = append(cells, Cell{Text: c.Text, Value: *c.Value, Num: true})
			}
			read := render.NodeHostSource(x.Host, through)
			if n := render.NodeHostSpan(x); n != "" {
				read += " (" + n + ")"
			}
			cells = append(cells, txt(read))
			if machines {
				cells = append(cells, txt(render.NodeHostMachine(x)))
			}
			if notes {
				cells = append(cells, txt(strings.Join(render.NodeHostAbsences(x.Host), "; ")))
			}
			t.add(cells...)
		}
	}
	return t
}

// nodeHostSeries tells the series of the nodes' hosts drawn over time: each figure that
// changes (not the host's CPUs, memory or clock offset), and of the devices only those
// that were a host's busiest in some step (a host has many).
func (e *Experiment) nodeHostSeries() func(string) bool {
	busiest := map[string]bool{}
	for _, r := range e.Runs {
		rows, _ := render.NodeHostRows(r.Result.Steps)
		for _, x := range rows {
			if x.Host.Device != nil {
				busiest[x.Host.Node+"/"+x.Host.Device.Name] = true
			}
		}
	}
	return func(name string) bool {
		if !analyze.IsNodeHostName(name) {
			return false
		}
		if node, dev, _, ok := result.ParseHostDiskName(name); ok {
			return busiest[node+"/"+dev]
		}
		_, fig, _ := result.ParseHostName(name)
		return !slices.Contains([]string{result.HostCPUs, result.HostMemTotal, result.HostScrapeOffsetS, result.HostBootTime}, fig)
	}
}
