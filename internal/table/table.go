// Package table owns agbench's terminal tables: Writer, the plain aligned layout of the
// commands' and the storage tester's tables (text/tabwriter with one setting); Grid, the
// report's layout with named column groups; and Write, the steps of a result as a table
// shaped like the articles' (basic-ag-read-only-routing-2016,
// ag-read-only-routing-s2d-2022): one row per point of the sweep, one column group per
// compared variant, repeats folded into their median. It is the grid under internal/render
// (which owns what the tables say) and the report's terminal text: the one place for a
// terminal table. It reads only result values; it must not import the runner or workloads.
//
// Imports from agbench: only internal/result, internal/stats, internal/units.
package table

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/units"
)

// Column is one column of a variant's group: a header and a figure of one step.
type Column struct {
	Header string
	// Value is the step's figure, and false when the step did not measure it; Format prints
	// the median of the repeats that measured it, and a figure no repeat measured is "–".
	Value  func(st *result.Step) (float64, bool)
	Format string
}

// Absent is how a table shows a figure that was not measured (never as 0).
const Absent = "–"

// Group is the steps of one point × variant (its repeats).
type group struct {
	point   int
	variant string
	steps   []*result.Step
}

// Write prints the table: the first column is the sweep's knob (key, e.g. "threads"), then
// for every variant its columns. Steps that are incomplete are marked with '*'.
func Write(w io.Writer, r *result.Result, key string, cols []Column) error {
	groups := map[[2]string]*group{}
	var variants []string
	seenVariant := map[string]bool{}
	var points []int
	seenPoint := map[int]string{}
	for i := range r.Steps {
		st := &r.Steps[i]
		k := [2]string{fmt.Sprint(st.Point), st.Variant}
		g := groups[k]
		if g == nil {
			g = &group{point: st.Point, variant: st.Variant}
			groups[k] = g
		}
		g.steps = append(g.steps, st)
		if !seenVariant[st.Variant] {
			seenVariant[st.Variant] = true
			variants = append(variants, st.Variant)
		}
		if _, ok := seenPoint[st.Point]; !ok {
			seenPoint[st.Point] = st.Params[key]
			if r.Meta.Segment != nil { // a segment's share of the whole run's: "3 of 8"
				seenPoint[st.Point] = result.LoadOf(st, r.Meta.Segment, key, key).Cell()
			}
			points = append(points, st.Point)
		}
	}
	sort.Ints(points)
	tw := NewWriter(w, Right)
	// Header: the variant names over their column groups, then the columns.
	if len(variants) > 1 || variants[0] != "" {
		line := []string{""}
		for _, v := range variants {
			for i := range cols {
				if i == 0 {
					line = append(line, v)
				} else {
					line = append(line, "")
				}
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	head := []string{key}
	for range variants {
		for _, c := range cols {
			head = append(head, c.Header)
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, p := range points {
		line := []string{seenPoint[p]}
		for _, v := range variants {
			g := groups[[2]string{fmt.Sprint(p), v}]
			for _, c := range cols {
				if g == nil {
					line = append(line, Absent)
					continue
				}
				line = append(line, StepsCell(g.steps, c))
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	return tw.Flush()
}

// StepsCell is a column's cell for the repeats of one point and variant: the median of the
// repeats that measured it ("–" when none did), marked '*' when a repeat is incomplete.
func StepsCell(steps []*result.Step, c Column) string {
	vals := make([]float64, 0, len(steps))
	mark := ""
	for _, st := range steps {
		if v, ok := c.Value(st); ok {
			vals = append(vals, v)
		}
		if !st.Complete {
			mark = "*"
		}
	}
	if len(vals) == 0 {
		return Absent + mark
	}
	return fmt.Sprintf(c.Format, stats.Median(vals)) + mark
}

// Landed summarises where each variant's sessions landed, e.g.
// "routing=on: node2 (standby) 12 (1,435 ops)": every session made, with the operations run
// on the node when the result placed them all (result.Sessions.Ops).
func Landed(r *result.Result) []string {
	type key struct {
		variant, node string
		standby       bool
	}
	counts := map[key]int{}
	ops := map[key]int64{}
	placed := map[key]bool{}
	var order []key
	for _, st := range r.Steps {
		for _, s := range st.Sessions {
			k := key{st.Variant, s.Node, s.InRecovery}
			if _, ok := counts[k]; !ok {
				order = append(order, k)
				placed[k] = true
			}
			counts[k] += s.Count
			if s.Ops == nil {
				placed[k] = false
			} else {
				ops[k] += *s.Ops
			}
		}
	}
	byVariant := map[string][]string{}
	var variants []string
	for _, k := range order {
		role := "primary"
		if k.standby {
			role = "standby"
		}
		if _, ok := byVariant[k.variant]; !ok {
			variants = append(variants, k.variant)
		}
		line := fmt.Sprintf("%s (%s) %d", k.node, role, counts[k])
		if placed[k] {
			line += " (" + units.GroupInt(ops[k]) + " ops)"
		}
		byVariant[k.variant] = append(byVariant[k.variant], line)
	}
	var out []string
	for _, v := range variants {
		name := v
		if name == "" {
			name = "sessions"
		}
		out = append(out, fmt.Sprintf("%s: %s", name, strings.Join(byVariant[v], ", ")))
	}
	return out
}
