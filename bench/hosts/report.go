package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// summary prints, per query, routing off and on per column, then the budgets' cost.
func summary(b *bench) error {
	var cols []column
	for _, c := range b.clusters {
		for _, s := range b.statesOf(c) {
			cols = append(cols, column{c, s})
		}
	}
	m, err := read(b, cols)
	if err != nil {
		return err
	}
	load, _ := os.ReadFile(filepath.Join(b.out, "load.txt"))
	fmt.Println("read-only routing, off vs on: it/s, the median over the rounds of each window's rate; 'apart' when")
	fmt.Println("the rounds' spreads (lowest to highest) of off and on do not overlap (3 rounds or more)")
	fmt.Println(strings.TrimRight(string(load), "\n"))
	for _, q := range b.queries {
		routingTable(m, cols, q)
	}
	for _, c := range b.clusters {
		if slices.Contains(cols, column{c, "on"}) && slices.Contains(cols, column{c, "lifted"}) {
			budgetsTable(m, c, b.queries)
		}
	}
	return nil
}

func routingTable(m *measured, cols []column, q string) {
	fmt.Printf("\n%s\n", what[q])
	head := fmt.Sprintf("%7s", "threads")
	threads := map[int]bool{}
	for _, col := range cols {
		head += fmt.Sprintf("  %20s %7s %6s %5s", col.cluster+" "+col.state+" off", "on", "on/off", "")
		for p := range m.runs[col][q] {
			threads[p.threads] = true
		}
	}
	fmt.Println(head)
	var ts []int
	for t := range threads {
		ts = append(ts, t)
	}
	sort.Ints(ts)
	for _, t := range ts {
		line := fmt.Sprintf("%7d", t)
		for _, col := range cols {
			off, on := rates(m.runs[col][q][point{t, "routing=off"}]), rates(m.runs[col][q][point{t, "routing=on"}])
			mo, mn := med(off), med(on)
			apart := "–"
			if olo, ohi, ok1 := spread(off); ok1 {
				if nlo, nhi, ok2 := spread(on); ok2 {
					apart = "overl"
					if nlo > ohi || olo > nhi {
						apart = "apart"
					}
				}
			}
			line += fmt.Sprintf("  %20s %7s %6s %5s", num(mo), num(mn), ratio(mn, mo, "%.2f"), apart)
		}
		fmt.Println(line)
	}
	for _, col := range cols {
		for _, n := range m.notes[col][q] {
			fmt.Printf("  %s %s: %s\n", col.cluster, col.state, n)
		}
	}
}

func budgetsTable(m *measured, c string, queries []string) {
	fmt.Printf("\nwhat the budgets cost on %s: budgets on vs lifted (the same cluster, data and counting; medians\n", c)
	fmt.Println("over the rounds): it/s, and the nodes' CPU per operation (their groups' CPU time over the window /")
	fmt.Println("operations; more CPU per operation with budgets on is what enforcing them costs)")
	fmt.Printf("%6s %7s %7s  %8s %8s %9s  %12s %8s %9s\n", "query", "threads", "routing", "it/s on", "lifted", "on/lifted",
		"CPU ms/op on", "lifted", "on/lifted")
	ms := func(x *float64) string {
		if x == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f", 1000**x)
	}
	for _, q := range queries {
		on, lifted := m.runs[column{c, "on"}][q], m.runs[column{c, "lifted"}][q]
		var ps []point
		for p := range on {
			if _, ok := lifted[p]; ok {
				ps = append(ps, p)
			}
		}
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].threads != ps[j].threads {
				return ps[i].threads < ps[j].threads
			}
			return ps[i].variant < ps[j].variant
		})
		for _, p := range ps {
			ra, rb := med(rates(on[p])), med(rates(lifted[p]))
			ca, cb := med(cpus(on[p])), med(cpus(lifted[p]))
			fmt.Printf("%6s %7d %7s  %8s %8s %9s  %12s %8s %9s\n", q, p.threads, strings.TrimPrefix(p.variant, "routing="),
				num(ra), num(rb), ratio(ra, rb, "%.2f"), ms(ca), ms(cb), ratio(ca, cb, "%.2f"))
		}
	}
}
