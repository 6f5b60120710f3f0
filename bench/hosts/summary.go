package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

var what = map[string]string{
	"point": "point select on a table larger than a node's memory (IO-bound on a modelled host)",
	"count": "count(*) on a table larger than a node's memory (IO-bound on a modelled host)",
	"small": "count(*) on a table that fits in a node's memory (CPU-bound)",
}

// figures are one step's: its whole-window rate and the nodes' CPU seconds per operation
// (absent without the groups' counters).
type figures struct {
	rate float64
	cpu  *float64
}

type point struct {
	threads int
	variant string
}

// column is one cluster in one state.
type column struct{ cluster, state string }

// measured holds, per column and query, each point's figures over the rounds, and the
// notes of the last round's analysis.
type measured struct {
	runs  map[column]map[string]map[point][]figures
	notes map[column]map[string][]string
}

var coresRE = regexp.MustCompile(`^host\.[^.]+\.cpu_cores$`)

func stepFigures(st *result.Step) (figures, bool) {
	secs, n := st.Window.Seconds(), float64(st.Totals().Count)
	if secs <= 0 || n == 0 {
		return figures{}, false
	}
	f := figures{rate: n / secs}
	var cores float64
	found := false
	for k, v := range st.Counters {
		if coresRE.MatchString(k) {
			cores, found = cores+v, true
		}
	}
	if found {
		c := cores * secs / n
		f.cpu = &c
	}
	return f, true
}

// read reads out/<cluster>-<state>-<query>-r<round>/*/result.json.
func read(b *bench, cols []column) (*measured, error) {
	m := &measured{runs: map[column]map[string]map[point][]figures{}, notes: map[column]map[string][]string{}}
	for _, col := range cols {
		m.runs[col], m.notes[col] = map[string]map[point][]figures{}, map[string][]string{}
		for _, q := range b.queries {
			m.runs[col][q] = map[point][]figures{}
			dirs, _ := filepath.Glob(filepath.Join(b.out, fmt.Sprintf("%s-%s-%s-r*", col.cluster, col.state, q)))
			sort.Strings(dirs)
			for _, d := range dirs {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					continue
				}
				files, _ := filepath.Glob(filepath.Join(d, "*", "result.json"))
				if len(files) == 0 {
					m.notes[col][q] = append(m.notes[col][q], fmt.Sprintf("no result in %s (see %s.txt)", d, d))
					continue
				}
				r, err := result.Read(files[0])
				if err != nil {
					return nil, err
				}
				for i := range r.Steps {
					if f, ok := stepFigures(&r.Steps[i]); ok {
						p := point{r.Steps[i].VUs, r.Steps[i].Variant}
						m.runs[col][q][p] = append(m.runs[col][q][p], f)
					}
				}
				notes, err := analysisNotes(r, d)
				if err != nil {
					return nil, err
				}
				m.notes[col][q] = notes // the last round's
			}
		}
	}
	return m, nil
}

// analysisNotes are the differences, comparisons and saturation sentences of a result's
// analysis, each marked with the round.
func analysisNotes(r *result.Result, dir string) ([]string, error) {
	if len(r.Analysis) == 0 {
		return nil, nil
	}
	var a analyze.Run
	if err := json.Unmarshal(r.Analysis, &a); err != nil {
		return nil, fmt.Errorf("%s: analysis: %w", dir, err)
	}
	msgs := append([]string{}, a.Differences...)
	for _, c := range a.Comparisons {
		msgs = append(msgs, c.Code+": "+c.Message)
	}
	for _, v := range a.Variants {
		if s := v.Result.Saturated.Sentence; s != "" {
			msgs = append(msgs, fmt.Sprintf("[%s] saturated: %s", v.Variant, s))
		}
	}
	round := filepath.Base(dir)
	round = round[max(0, len(round)-2):]
	for i := range msgs {
		msgs[i] = round + ": " + msgs[i]
	}
	return msgs, nil
}

func rates(fs []figures) []float64 {
	var v []float64
	for _, f := range fs {
		v = append(v, f.rate)
	}
	return v
}

func cpus(fs []figures) []float64 {
	var v []float64
	for _, f := range fs {
		if f.cpu != nil {
			v = append(v, *f.cpu)
		}
	}
	return v
}

// med is the median, absent (nil) for none.
func med(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	m := stats.Median(xs)
	return &m
}

// spread is the lowest and highest of 3 or more figures.
func spread(xs []float64) (lo, hi float64, ok bool) {
	if len(xs) < 3 {
		return 0, 0, false
	}
	return stats.Quantile(xs, 0), stats.Quantile(xs, 1), true
}

func num(x *float64) string {
	switch {
	case x == nil:
		return "–"
	case *x >= 10:
		return fmt.Sprintf("%.0f", *x)
	default:
		return fmt.Sprintf("%.2f", *x)
	}
}

func ratio(a, b *float64, format string) string {
	if a == nil || b == nil || *a == 0 || *b == 0 {
		return "–"
	}
	return fmt.Sprintf(format, *a / *b)
}

// indexLine is the offset of the first line of text that starts with prefix, or -1.
func indexLine(text, prefix string) int {
	if strings.HasPrefix(text, prefix) {
		return 0
	}
	if i := strings.Index(text, "\n"+prefix); i >= 0 {
		return i + 1
	}
	return -1
}
