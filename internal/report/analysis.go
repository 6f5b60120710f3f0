package report

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

// VariantAnalysis is internal/analyze's judgement of one variant of a run, read from the
// JSON a result stores, with the variant it judges ("" for a run-level analysis).
type VariantAnalysis struct {
	Variant string `json:"variant,omitempty"`
	analyze.Analysis
}

// decodeAnalysis reads a stored analysis: internal/analyze's Run ({"variants": [{"variant",
// "analysis"}], "comparisons", "differences"}), or a bare analysis, a list of analyses each
// naming its variant, or an object of analyses keyed by variant. An analysis that does not
// decode is an error naming it, never an empty judgement.
func (r *Run) decodeAnalysis(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	fail := func(err error) error { return fmt.Errorf("analysis: %w", err) }
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		var list []VariantAnalysis
		if lerr := json.Unmarshal(raw, &list); lerr != nil {
			return fail(lerr)
		}
		r.Analysis = list
		return nil
	}
	if _, ok := probe["variants"]; ok {
		var ar analyze.Run
		if err := json.Unmarshal(raw, &ar); err != nil {
			return fail(err)
		}
		for _, v := range ar.Variants {
			r.Analysis = append(r.Analysis, VariantAnalysis{Variant: v.Variant, Analysis: v.Result})
		}
		r.Comparisons, r.Differences = ar.Comparisons, ar.Differences
		return nil
	}
	if isAnalysis(probe) {
		var a VariantAnalysis
		if err := json.Unmarshal(raw, &a); err != nil {
			return fail(err)
		}
		r.Analysis = []VariantAnalysis{a}
		return nil
	}
	for _, k := range sortedKeys(probe) {
		var inner map[string]json.RawMessage
		if json.Unmarshal(probe[k], &inner) != nil || !isAnalysis(inner) {
			continue // not an analysis: a key of some other kind, which readers ignore
		}
		var a VariantAnalysis
		if err := json.Unmarshal(probe[k], &a); err != nil {
			return fmt.Errorf("analysis %q: %w", k, err)
		}
		if a.Variant == "" {
			a.Variant = k
		}
		r.Analysis = append(r.Analysis, a)
	}
	return nil
}

func isAnalysis(m map[string]json.RawMessage) bool {
	_, k := m["knee"]
	_, v := m["verdicts"]
	_, s := m["saturated"]
	return k || v || s
}

// decodeStepVerdicts reads the verdicts of each step's stored analysis, by the step's
// position; a step analysis that does not decode is an error naming the step.
func (r *Run) decodeStepVerdicts() error {
	for i := range r.Result.Steps {
		st := &r.Result.Steps[i]
		if len(st.Analysis) == 0 || string(st.Analysis) == "null" {
			continue
		}
		var a struct {
			Verdicts []analyze.Verdict `json:"verdicts"`
		}
		if err := json.Unmarshal(st.Analysis, &a); err != nil {
			return fmt.Errorf("step %d analysis: %w", st.Index, err)
		}
		if len(a.Verdicts) > 0 {
			if r.stepVerdicts == nil {
				r.stepVerdicts = map[int][]analyze.Verdict{}
			}
			r.stepVerdicts[i] = a.Verdicts
		}
	}
	return nil
}

// analysisFor returns the analysis of a variant of a run: its own, or the run's.
func (r *Run) analysisFor(variant string) *VariantAnalysis {
	var runLevel *VariantAnalysis
	for i := range r.Analysis {
		a := &r.Analysis[i]
		switch a.Variant {
		case variant:
			return a
		case "":
			runLevel = a
		}
	}
	if runLevel != nil && len(r.variantNames()) <= 1 {
		return runLevel
	}
	return nil
}

// runAnalysis returns the run-level analysis (one that names no variant).
func (r *Run) runAnalysis() *VariantAnalysis {
	for i := range r.Analysis {
		if r.Analysis[i].Variant == "" {
			return &r.Analysis[i]
		}
	}
	return nil
}

func (r *Run) variantNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, st := range r.Result.Steps {
		if !seen[st.Variant] {
			seen[st.Variant] = true
			out = append(out, st.Variant)
		}
	}
	return out
}

// Finding is one line of the report's summary: a sentence and its severity.
type Finding struct {
	// Kind is "incomplete", "difference", "saturated", "knee", "warning", or "unjudged" for
	// a rule that could not be applied (analyze.Verdict.NotJudged): said, and never counted
	// as a warning, as the command marks it "?" rather than "!".
	Kind string
	// Key is what a warning is about (a verdict's code, or the words before a warning's
	// first colon), without the run it came from: warnings group by it.
	Key  string
	Text string
	// Short is the finding in a few words for the summary ("routing=on: locks from 2 VUs").
	Short string
}

// Findings gathers what the top of the report says about an experiment: what saturated,
// where the knee is, and every validity verdict and warning (each once).
func (e *Experiment) Findings() []Finding {
	f := &findings{seen: map[string]bool{}}
	for _, r := range e.Runs {
		prefix := ""
		if len(e.Runs) > 1 {
			prefix = r.Label + ": "
		}
		if !r.Result.Complete {
			reason := r.Result.IncompleteReason
			if reason == "" {
				reason = "cut short"
			}
			f.add("incomplete", prefix, "run incomplete: "+reason)
		}
		e.analysisFindings(f, r, prefix)
		for _, d := range mergeDifferences(r.Differences) {
			f.add("difference", prefix, d)
		}
		runWarnings(f, r, prefix)
	}
	sort.SliceStable(f.out, func(i, j int) bool { return kindRank(f.out[i].Kind) < kindRank(f.out[j].Kind) })
	return f.out
}

// findings collects an experiment's findings, each text of a kind once.
type findings struct {
	out  []Finding
	seen map[string]bool
}

// add appends a finding of one run (prefix names it in a report of several, else ""); it
// reports whether it was new.
func (f *findings) add(kind, prefix, body string) bool {
	body = strings.TrimSpace(body)
	text := prefix + body
	if body == "" || f.seen[kind+text] {
		return false
	}
	f.seen[kind+text] = true
	f.out = append(f.out, Finding{Kind: kind, Text: text, Short: text, Key: warningKey(body)})
	return true
}

// verdict appends a verdict of one run: a warning, or what could not be judged.
func (f *findings) verdict(prefix string, v analyze.Verdict) {
	kind := "warning"
	if v.NotJudged {
		kind = "unjudged"
	}
	f.add(kind, prefix, v.Code+": "+v.Message)
}

// analysisFindings adds what each of a run's analyses says saturated (with its few words
// for the summary) and where its knee is.
func (e *Experiment) analysisFindings(f *findings, r *Run, prefix string) {
	for _, a := range r.Analysis {
		p := prefix
		if a.Variant != "" {
			p += a.Variant + ": "
		}
		if res := a.Saturated.Resource; f.add("saturated", p, a.Saturated.Sentence) && res != "" {
			short := p + "saturated: " + res
			if res == analyze.ResSyncAway { // commits waited for a standby that was not there
				short = p + "not saturated: commits waited for " + res
			}
			if a.Saturated.From > 0 {
				short += " from " + fmtNum(a.Saturated.From) + " " + a.LoadName
			}
			f.out[len(f.out)-1].Short = short
		}
		if kp := a.Knee.Knee; kp != nil {
			f.add("knee", p, e.kneeText(r, a, kp))
		} else if a.Knee.RisingAtEnd {
			f.add("knee", p, "no knee reached: throughput still rises at the highest load")
		}
	}
}

// runWarnings adds a run's validity verdicts (of its variants, its comparison and its
// steps), its drill's failed checks and the warnings it recorded while running.
func runWarnings(f *findings, r *Run, prefix string) {
	for _, a := range r.Analysis {
		for _, v := range a.Verdicts {
			f.verdict(prefix, v)
		}
	}
	for _, v := range r.Comparisons {
		f.verdict(prefix, v)
	}
	if d, err := r.Result.DrillRun(); err == nil && d != nil {
		for _, failed := range d.Failed {
			f.add("warning", prefix, "drill check failed: "+failed)
		}
	}
	analysed := len(r.Analysis) > 0
	for _, w := range r.Result.Warnings {
		if !(analysed && testerSteal(w)) {
			f.add("warning", prefix, w)
		}
	}
	for i, st := range r.Result.Steps {
		for _, v := range r.stepVerdicts[i] {
			f.verdict(prefix, v)
		}
		for _, w := range st.Warnings {
			if !(analysed && testerSteal(w)) {
				f.add("warning", prefix, stepName(&st)+": "+w)
			}
		}
	}
}

// testerSteal reports whether w is the steal warning agbench disk wrote (run-level ones
// prefixed with the step, "threads 1, QD 1: steal time …") before steal was
// left to the analysis alone ("steal time 8.0%: a noisy neighbour shares the CPUs"): in an
// analysed run the analysis's steal verdict says it, with the IO beside it, so a second,
// possibly contrary cause is not printed.
func testerSteal(w string) bool {
	return strings.Contains(w, "steal time ") && strings.HasSuffix(w, ": a noisy neighbour shares the CPUs")
}

func kindRank(k string) int {
	return map[string]int{"incomplete": 0, "difference": 1, "saturated": 2, "knee": 3, "warning": 4, "unjudged": 5}[k]
}

// stepName names a step in a warning: its variant and load.
func stepName(st *result.Step) string {
	name := fmt.Sprintf("step %d (%s", st.Index+1, result.LoadOf(st, nil, "vus", "VUs"))
	if st.Variant != "" {
		name += ", " + st.Variant
	}
	return name + ")"
}

// kneeText describes a knee by its load and, from the measured figures at that load, the
// throughput and p99 there.
func (e *Experiment) kneeText(r *Run, a VariantAnalysis, kp *analyze.Point) string {
	load := a.LoadName
	if load == "" {
		load = e.LoadName
	}
	text := "knee at " + fmtNum(kp.Load) + " " + load
	_, label, get := e.metric()
	for _, v := range e.Variants {
		if v.Run != r || (a.Variant != "" && v.Variant != a.Variant) {
			continue
		}
		for _, c := range v.Cells {
			if c != nil && c.Load == kp.Load {
				fig := label + " not measured"
				if v, ok := get(c); ok {
					fig = fmtNum(v) + " " + label
				}
				return text + " (" + fig + ", p99 " + fmtNum(ms(c.Latency.P99)) + " ms)"
			}
		}
	}
	return text
}

// WarningGroup is the warnings of one kind (a verdict's code, or what a warning is about):
// how many, and each one's text.
type WarningGroup struct {
	Key   string
	Texts []string
}

// stepPrefix is a step's name at the start of a warning, after the run's name when it has one.
var stepPrefix = regexp.MustCompile(`^(?:[^:]*: )?(?:step \d+ \([^)]*\)|threads \d+, QD \d+): `)

// warningKey is what a finding's text (without the run it came from) is about: a verdict's
// code, or the words before the first colon after a step's name; "warning" when those are
// too long to be a kind.
func warningKey(body string) string {
	key, _, ok := strings.Cut(stepPrefix.ReplaceAllString(body, ""), ": ")
	if !ok || len(key) > 40 {
		return "warning"
	}
	return key
}

// GroupWarnings splits findings into what the report says outright and the warnings,
// grouped by kind (Key, whichever run they came from) in the order each kind first appears.
func GroupWarnings(fs []Finding) (main []Finding, groups []WarningGroup) {
	index := map[string]int{}
	for _, f := range fs {
		if f.Kind != "warning" {
			main = append(main, f)
			continue
		}
		key := f.Key
		if key == "" {
			key = warningKey(f.Text)
		}
		i, seen := index[key]
		if !seen {
			i = len(groups)
			index[key] = i
			groups = append(groups, WarningGroup{Key: key})
		}
		groups[i].Texts = append(groups[i].Texts, f.Text)
	}
	return main, groups
}

var differenceRE = regexp.MustCompile(`^(\w+) at (\S+) (\S+): (.+) ahead, ([\d.]+)× \((.*)\)$`)

// mergeDifferences joins internal/analyze's per-load differences with the same winner into
// one sentence: "throughput: routing=off ahead at 1, 4, 8 threads (1.68–2.04×; ...)".
// Sentences of another shape are kept as they are.
func mergeDifferences(ds []string) []string {
	type agg struct {
		what, unit, winner, note string
		loads                    []string
		lo, hi                   float64
	}
	var order []string
	groups := map[string]*agg{}
	var out []string
	for _, d := range ds {
		m := differenceRE.FindStringSubmatch(d)
		if m == nil {
			out = append(out, d)
			continue
		}
		ratio, _ := strconv.ParseFloat(m[5], 64)
		key := m[1] + "|" + m[4] + "|" + m[3]
		g := groups[key]
		if g == nil {
			g = &agg{what: m[1], unit: m[3], winner: m[4], note: m[6], lo: ratio, hi: ratio}
			groups[key] = g
			order = append(order, key)
		}
		g.loads = append(g.loads, m[2])
		g.lo, g.hi = min(g.lo, ratio), max(g.hi, ratio)
	}
	for _, k := range order {
		g := groups[k]
		r := fmt.Sprintf("%.2f×", g.lo)
		if g.hi != g.lo {
			r = fmt.Sprintf("%.2f–%.2f×", g.lo, g.hi)
		}
		out = append(out, fmt.Sprintf("%s: %s ahead at %s %s (%s; %s)", g.what, g.winner, strings.Join(g.loads, ", "), g.unit, r, g.note))
	}
	return out
}
