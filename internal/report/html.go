package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
)

//go:embed report.css
var css string

//go:embed report.html.tmpl
var pageTmpl string

// CSP forbids the page every script, every fetch, frame, font and form: it can only draw
// itself from its own inline styles and inline SVG (data: images allowed for none in use).
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; " +
	"connect-src 'none'; font-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"

type page struct {
	Title       string
	Generated   string
	CSP         string
	CSS         template.CSS
	Summary     []summaryView
	Experiments []expView
	Runs        []runView
}

type summaryView struct {
	ID, Title string
	Headline  string
	Spark     template.HTML
	Legend    []legendItem
	Metric    string
	Findings  []Finding
	Groups    []WarningGroup
	Warnings  int
}

type expView struct {
	ID, Title string
	Subtitle  string
	Findings  []Finding
	Groups    []WarningGroup
	KPIs      []kpi
	Charts    []chartView
	Tables    []Table
}

type kpi struct{ Label, Value, Note string }

type chartView struct {
	Title, Note string
	Wide        bool
	SVG         template.HTML
	Legend      []legendItem
}

type legendItem struct {
	Name, Colour string
	Dash         bool
}

type runView struct {
	Label, Command, Started, Duration, Status string
	Host, Server, Topology, Tool              string
	Settings                                  [][2]string
	// Segments say a merged run's segments (result.Merged.Lines); none for a run of one.
	Segments []string
}

// HTML renders the experiments as one self-contained HTML page: no script, no external
// resource, everything inline.
func HTML(exps []*Experiment, generated time.Time) ([]byte, error) {
	p := page{Title: "agbench report", Generated: generated.UTC().Format("2006-01-02 15:04 UTC"), CSP: CSP, CSS: template.CSS(css)}
	var cmds []string
	for i, e := range exps {
		id := fmt.Sprintf("exp%d-%s", i+1, e.slug())
		ev := e.view(id)
		p.Experiments = append(p.Experiments, ev)
		// One card per study: a card's headline compares variants of one target only.
		if studies := e.Studies(); len(studies) > 1 {
			for _, s := range studies {
				fs, gs := GroupWarnings(s.Findings())
				p.Summary = append(p.Summary, s.card(id, fs, gs))
			}
		} else {
			p.Summary = append(p.Summary, e.card(id, ev.Findings, ev.Groups))
		}
		if len(cmds) == 0 || cmds[len(cmds)-1] != e.Command {
			cmds = append(cmds, e.Command)
		}
		for _, r := range e.Runs {
			p.Runs = append(p.Runs, runViewOf(r))
		}
	}
	if len(cmds) > 0 {
		p.Title = "agbench: " + strings.Join(cmds, ", ")
	}
	t, err := template.New("page").Funcs(template.FuncMap{
		"colspan": func(g Group) int { return g.Span },
	}).Parse(pageTmpl)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// card is the summary's card of an experiment (or of one study of it), linking to the
// experiment's section id: its headline, findings and warnings, and for a sweep a
// sparkline of its metric.
func (e *Experiment) card(id string, findings []Finding, groups []WarningGroup) summaryView {
	warn := 0
	for _, g := range groups {
		warn += len(g.Texts)
	}
	// A card says what was found; what could not be judged is in the experiment's section.
	shown := slices.DeleteFunc(slices.Clone(findings), func(f Finding) bool { return f.Kind == "unjudged" })
	sv := summaryView{ID: id, Title: e.name(), Headline: e.Headline(), Findings: shown, Groups: groups, Warnings: warn}
	if !e.Sweep {
		return sv
	}
	_, label, get := e.metric()
	var lines []line
	for i, v := range e.Variants {
		xs, ys := make([]float64, len(e.Points)), make([]float64, len(e.Points))
		for pi, c := range v.Cells {
			xs[pi], ys[pi] = float64(pi), math.NaN()
			if c != nil {
				ys[pi] = orNaN(get(c))
			}
		}
		lines = append(lines, line{Name: v.Name, Colour: colour(i), X: xs, Y: ys})
	}
	sv.Spark, sv.Legend = sparkline(lines, len(e.Points)), e.legend()
	sv.Metric = label + " vs " + e.LoadName + " " + e.Points[0] + "–" + e.Points[len(e.Points)-1]
	return sv
}

// metric is what an experiment's throughput chart shows: a headline counter when the result
// has one the articles chart (NOPM, IOPS, MB/s), operations per second otherwise. get's
// second value is false where a cell did not measure the figure (a counter absent from its
// steps, such as the servers' MB/s through a listener, or a cell whose operations finished
// none, analyze.MeasuredNothing) or is left out (none of its steps completed, cut by a fault
// or aborted: analyze.LeftOut): absent, never 0.
func (e *Experiment) metric() (name, label string, get func(*Figures) (float64, bool)) {
	name, label, of := e.metricOf()
	return name, label, func(f *Figures) (float64, bool) {
		if analyze.MeasuredNothing(f.Steps) || analyze.LeftOut(f.Steps) != "" {
			return 0, false
		}
		return of(f)
	}
}

func (e *Experiment) metricOf() (name, label string, get func(*Figures) (float64, bool)) {
	h := analyze.HeadlineOf(func(c string) bool { return slices.Contains(e.Counters, c) })
	if h.Counter {
		return h.Name, h.Label, func(f *Figures) (float64, bool) { v, ok := f.Counters[h.Name]; return v, ok }
	}
	return h.Name, h.Label, func(f *Figures) (float64, bool) { return f.Throughput, true }
}

// orNaN is a chart's y: NaN (no point) where the figure was not measured.
func orNaN(v float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return v
}

// notMeasured names the variants that did not measure the metric in any cell:
// "MB/s not measured in routing=on".
func notMeasured(label string, names []string) string {
	return label + " not measured in " + strings.Join(names, ", ")
}

// peak is a variant's largest measured value of the metric and the point where it was
// reached; at is -1 when no cell measured it.
func peak(v *Variant, get func(*Figures) (float64, bool)) (pk float64, at int) {
	at = -1
	for i, c := range v.Cells {
		if c == nil {
			continue
		}
		if x, ok := get(c); ok && (at < 0 || x > pk) {
			pk, at = x, i
		}
	}
	return pk, at
}

// Headline is the one sentence the summary gives an experiment: its best result, and with
// two or more variants, how the last compares with the first by the rule for "different"
// (analyze.Differ): "+X%" only where the rule says they differ, and otherwise "no
// difference measured" or "too little data to compare", said as such. It rests only on
// measured figures: a gap with an absent side is not computed, and a variant that measured
// nothing says so. An experiment of several studies (targets) has each study's sentence,
// named: variants are compared within a study, never across clusters.
func (e *Experiment) Headline() string {
	if studies := e.Studies(); len(studies) > 1 {
		parts := make([]string, len(studies))
		for i, s := range studies {
			parts[i] = s.Title + ": " + s.Headline()
		}
		return strings.Join(parts, " | ")
	}
	if e.isDrill() {
		return e.drillHeadline()
	}
	if len(e.Variants) == 0 {
		return "no steps measured"
	}
	// A sweep's headline is the comparison; one load compared ends the peaks with it.
	oneLoad := !e.Sweep && len(e.Variants) == 2 && len(e.Points) == 1
	var compared string
	if len(e.Variants) >= 2 && (e.Sweep || oneLoad) {
		compared = e.comparison()
		if compared != "" && !oneLoad {
			return compared
		}
	}
	parts := e.peaks()
	if compared != "" {
		parts = append(parts, compared)
	}
	return strings.Join(parts, "; ")
}

// gap is how two variants compare at one point: Differ's outcome, the winner's median over
// the other's (Different only; +Inf when the other's median is 0), and the sentence.
type gap struct {
	d    analyze.Difference
	rel  float64
	text string
}

// comparison is the headline's sentence comparing the last variant with the first: at the
// last point both measured, and the largest difference where it is elsewhere; "" when no
// point was measured by both.
func (e *Experiment) comparison() string {
	a, b := e.Variants[0], e.Variants[len(e.Variants)-1]
	gaps := e.gaps(a, b)
	if len(gaps) == 0 {
		return ""
	}
	last := gaps[len(gaps)-1]
	h := fmt.Sprintf("%s vs %s: %s", b.Name, a.Name, last.text)
	largest := -1
	for i, g := range gaps {
		if g.d.Outcome == analyze.Different && (largest < 0 || g.rel > gaps[largest].rel) {
			largest = i
		}
	}
	if largest >= 0 && largest != len(gaps)-1 {
		h += "; largest gap " + gaps[largest].text
	}
	if largest < 0 && len(gaps) > 1 {
		h += fmt.Sprintf(" (no difference claimed at any of %d loads)", len(gaps))
	}
	return h
}

// gaps compares a and b at every point where both measured the metric.
func (e *Experiment) gaps(a, b *Variant) []gap {
	_, label, get := e.metric()
	var gaps []gap
	for i := range e.Points {
		if a.Cells[i] == nil || b.Cells[i] == nil {
			continue
		}
		va, oka := get(a.Cells[i])
		_, okb := get(b.Cells[i])
		if !oka || !okb || va <= 0 {
			continue
		}
		g := gap{d: differ(a.Name, a.Cells[i], b.Name, b.Cells[i], get)}
		at := e.Points[i]
		if e.Sweep {
			at += " " + e.LoadName
		}
		switch {
		case g.d.Outcome == analyze.Different && g.d.Ratio > 0:
			// Differ's own ratio of medians, so the figure agrees with the winner it names.
			g.rel = g.d.Ratio
			g.text = fmt.Sprintf("%s ahead, %.2f× %s at %s (medians of %s)", g.d.Winner, g.d.Ratio, label, at, g.d.Spread)
		case g.d.Outcome == analyze.Different:
			g.rel = math.Inf(1)
			g.text = fmt.Sprintf("%s ahead in %s at %s; the other side's median 0", g.d.Winner, label, at)
		default:
			g.text = fmt.Sprintf("%s (%s) at %s", g.d.Outcome, label, at)
		}
		gaps = append(gaps, g)
	}
	return gaps
}

// peaks are the headline's parts naming each variant's peak, and the variants that measured
// the metric nowhere.
func (e *Experiment) peaks() []string {
	_, label, get := e.metric()
	var parts, absent []string
	for _, v := range e.Variants {
		pk, at := peak(v, get)
		if at < 0 {
			absent = append(absent, v.Name)
			continue
		}
		where := ""
		if e.Sweep {
			where = " at " + e.Points[at] + " " + e.LoadName
		}
		parts = append(parts, fmt.Sprintf("%s: peak %s %s%s", v.Name, fmtNum(pk), label, where))
	}
	if len(absent) > 0 {
		why := notMeasured(label, absent)
		if len(e.Variants) >= 2 && e.Sweep {
			why = fmt.Sprintf("%s vs %s not compared: %s", e.Variants[len(e.Variants)-1].Name, e.Variants[0].Name, why)
		}
		parts = append(parts, why)
	}
	return parts
}

func (e *Experiment) view(id string) expView {
	ev := expView{ID: id, Title: e.name(), Tables: e.Tables()}
	ev.Findings, ev.Groups = GroupWarnings(e.Findings())
	var sub []string
	for _, r := range e.Runs {
		if r.Label != e.Command && !strings.HasSuffix(ev.Title, r.Label) {
			sub = append(sub, r.Label)
		}
	}
	ev.Subtitle = strings.Join(sub, " · ")
	ev.KPIs = e.kpis()
	ev.Charts = e.charts()
	return ev
}

func (e *Experiment) kpis() []kpi {
	if e.isDrill() {
		return e.drillKPIs()
	}
	_, label, get := e.metric()
	var out []kpi
	for _, v := range e.Variants {
		pk, at := peak(v, get)
		if at < 0 {
			if hasCells(v) {
				out = append(out, kpi{Label: v.Name + " · peak " + label, Value: "–", Note: notMeasured(label, []string{v.Name})})
			}
			continue
		}
		note := ""
		if e.Sweep {
			note = "at " + analyze.LoadCount(e.Points[at], e.LoadName)
		}
		note += fmt.Sprintf(", p99 %s ms", fmtNum(ms(v.Cells[at].Latency.P99)))
		out = append(out, kpi{Label: v.Name + " · peak " + label, Value: fmtNum(pk), Note: strings.TrimPrefix(note, ", ")})
	}
	return out
}

func hasCells(v *Variant) bool {
	for _, c := range v.Cells {
		if c != nil {
			return true
		}
	}
	return false
}

func (e *Experiment) legend() []legendItem {
	var out []legendItem
	for i, v := range e.Variants {
		out = append(out, legendItem{Name: v.Name, Colour: colour(i)})
	}
	return out
}

func (e *Experiment) charts() []chartView {
	if e.isDrill() {
		return e.drillCharts()
	}
	var out []chartView
	_, label, get := e.metric()
	if e.Sweep {
		tp := lineChart{Class: "throughput", YLabel: label, XLabel: e.LoadName, XTicks: e.Points}
		lat := lineChart{Class: "latency", YLabel: "ms", XLabel: e.LoadName, XTicks: e.Points}
		for i, v := range e.Variants {
			xs, ys, p95, p99 := make([]float64, len(e.Points)), make([]float64, len(e.Points)), make([]float64, len(e.Points)), make([]float64, len(e.Points))
			for pi, c := range v.Cells {
				xs[pi] = float64(pi)
				if c == nil {
					ys[pi], p95[pi], p99[pi] = math.NaN(), math.NaN(), math.NaN()
					continue
				}
				ys[pi], p95[pi], p99[pi] = orNaN(get(c)), ms(c.Latency.P95), ms(c.Latency.P99)
			}
			tp.Lines = append(tp.Lines, line{Name: v.Name, Colour: colour(i), X: xs, Y: ys})
			lat.Lines = append(lat.Lines, line{Name: v.Name + " p99", Colour: colour(i), X: xs, Y: p99},
				line{Name: v.Name + " p95", Colour: colour(i), X: xs, Y: p95, Dash: true})
			tp.Marks = append(tp.Marks, e.marks(v, i)...)
			lat.Marks = append(lat.Marks, e.marks(v, i)...)
		}
		out = append(out, chartView{Title: label + " vs " + e.LoadName, Note: "one line per variant; knee, saturation and SLO points marked", SVG: tp.SVG(), Legend: e.legend()})
		leg := e.legend()
		leg = append(leg, legendItem{Name: "p99 solid, p95 dashed", Colour: "#888", Dash: true})
		out = append(out, chartView{Title: "p95 / p99 latency vs " + e.LoadName, Note: "all operations together, as the client saw them", SVG: lat.SVG(), Legend: leg})
	} else {
		bars := stackedBars{Class: "steps", YLabel: "seconds", Stacks: []string{"duration"}, Colours: []string{colour(0)}}
		for _, v := range e.Variants {
			g := barGroup{Name: v.Name}
			for pi, c := range v.Cells {
				if c != nil {
					g.Bars = append(g.Bars, bar{Label: e.Points[pi], Values: []float64{c.Seconds}})
				}
			}
			bars.Groups = append(bars.Groups, g)
		}
		out = append(out, chartView{Title: "duration per step", SVG: bars.SVG(), Legend: []legendItem{{Name: "duration", Colour: colour(0)}}})
	}
	if e.HasWaits() {
		out = append(out, e.waitChart())
	}
	if e.Sweep && (e.HasWaits() || e.HasDevice()) {
		out = append(out, e.layerCharts()...)
	}
	if c, ok := e.lagChart(); ok {
		out = append(out, c)
	}
	out = append(out, e.seriesCharts("lag", "replication lag over time")...)
	modelled := func(name string) bool {
		return strings.HasPrefix(name, result.HostPrefix) && !analyze.IsNodeHostName(name)
	}
	out = append(out, e.seriesChartsOf(modelled, "host", "modelled hosts over time (each node's control group: CPU, memory, IO against its budget)")...)
	out = append(out, e.seriesChartsOf(e.nodeHostSeries(), "nodehost", "nodes' hosts over time (their node_exporters: CPU, run queue, memory, busiest devices, network)")...)
	if c, ok := e.throughputOverTime(); ok {
		out = append(out, c)
	}
	return out
}

// marks returns the knee, saturation and SLO points of a variant's analysis.
func (e *Experiment) marks(v *Variant, i int) []mark {
	a := v.Run.analysisFor(v.Variant)
	if a == nil {
		return nil
	}
	suffix := ""
	if len(e.Variants) > 1 {
		suffix = " (" + v.Name + ")"
	}
	var out []mark
	add := func(p *analyze.Point, what string) {
		if p == nil {
			return
		}
		for pi, c := range v.Cells {
			if c != nil && c.Load == p.Load {
				out = append(out, mark{X: float64(pi), Label: what + suffix, Colour: colour(i)})
				return
			}
		}
	}
	add(a.Knee.Knee, "knee")
	add(a.Knee.Saturation, "saturation")
	add(a.Knee.SLOPoint, "SLO point")
	add(a.Knee.SLOBroken, "SLO broken")
	return out
}

func (e *Experiment) waitChart() chartView {
	classes := e.WaitClasses()
	bars := stackedBars{Class: "waits", Wide: true, YLabel: "sessions", Stacks: classes}
	var leg []legendItem
	for i, k := range classes {
		bars.Colours = append(bars.Colours, waitColour(k, i))
		leg = append(leg, legendItem{Name: k, Colour: waitColour(k, i)})
	}
	for _, v := range e.Variants {
		g := barGroup{Name: v.Name}
		for pi, c := range v.Cells {
			if c == nil {
				continue
			}
			br := bar{Label: e.Points[pi]}
			for _, k := range classes {
				br.Values = append(br.Values, waitOf(c, k))
			}
			g.Bars = append(g.Bars, br)
		}
		bars.Groups = append(bars.Groups, g)
	}
	return chartView{Title: "wait profile per step", Note: "mean sessions in each wait class (pg_stat_activity samples)", Wide: true, SVG: bars.SVG(), Legend: leg}
}

// layerCharts are the layers side by side against load: client latency, database sessions
// waiting, device await and queue.
func (e *Experiment) layerCharts() []chartView {
	type layer struct {
		title, unit string
		get         func(*Figures) (float64, bool)
	}
	layers := []layer{
		{"client: mean latency", "ms", func(f *Figures) (float64, bool) { return f.Latency.Mean / 1000, true }},
		{"database: active sessions", "sessions", func(f *Figures) (float64, bool) {
			t := 0.0
			for _, w := range f.Waits {
				t += w
			}
			return t, len(f.Waits) > 0
		}},
		{"device: await", "ms", func(f *Figures) (float64, bool) { return f.DeviceAwaitMs, f.HasDevice }},
		{"device: queue depth", "requests", func(f *Figures) (float64, bool) { return f.DeviceQueue, f.HasDevice }},
	}
	var out []chartView
	for _, l := range layers {
		c := lineChart{Class: "layer", YLabel: l.unit, XLabel: e.LoadName, XTicks: e.Points}
		any := false
		for i, v := range e.Variants {
			xs, ys := make([]float64, len(e.Points)), make([]float64, len(e.Points))
			for pi, f := range v.Cells {
				xs[pi], ys[pi] = float64(pi), math.NaN()
				if f != nil {
					if y, ok := l.get(f); ok {
						ys[pi], any = y, true
					}
				}
			}
			c.Lines = append(c.Lines, line{Name: v.Name, Colour: colour(i), X: xs, Y: ys})
		}
		if any {
			out = append(out, chartView{Title: "layers · " + l.title, SVG: c.SVG(), Legend: e.legend()})
		}
	}
	return out
}

// seriesCharts draw every sampler series whose name contains key over the run's time, one
// chart per unit, one line per series name (its steps joined, with gaps between them).
func (e *Experiment) seriesCharts(key, title string) []chartView {
	return e.seriesChartsOf(func(name string) bool { return strings.Contains(name, key) }, strings.Trim(key, "."), title)
}

// seriesChartsOf is seriesCharts for the series whose names match, their charts of CSS
// class "timeseries <class>".
func (e *Experiment) seriesChartsOf(match func(string) bool, class, title string) []chartView {
	type pts struct{ x, y []float64 }
	byUnit := map[string]map[string]*pts{}
	for _, r := range e.Runs {
		t0 := r.Result.Meta.Started
		if len(r.Result.Steps) > 0 {
			t0 = r.Result.Steps[0].Window.Start
		}
		for _, st := range r.Result.Steps {
			for name, s := range st.Series {
				if !match(name) || len(s.T) == 0 {
					continue
				}
				unit := s.Unit
				if unit == "" {
					unit = unitOf(name)
				}
				if byUnit[unit] == nil {
					byUnit[unit] = map[string]*pts{}
				}
				ln := nodeNamesOf(r.Result.Meta).figure(name)
				if len(e.Runs) > 1 {
					ln = r.Label + ": " + ln
				}
				p := byUnit[unit][ln]
				if p == nil {
					p = &pts{}
					byUnit[unit][ln] = p
				}
				if len(p.x) > 0 {
					p.x, p.y = append(p.x, p.x[len(p.x)-1]), append(p.y, math.NaN())
				}
				off := s.Start.Sub(t0).Seconds()
				for i := range min(len(s.T), len(s.V)) {
					p.x, p.y = append(p.x, off+s.T[i]), append(p.y, s.V[i])
				}
			}
		}
	}
	var out []chartView
	for _, unit := range sortedKeys(byUnit) {
		lines := byUnit[unit]
		c := lineChart{Class: "timeseries " + class, Wide: true, YLabel: unit, XLabel: "seconds", Numeric: true}
		var leg []legendItem
		for i, name := range sortedKeys(lines) {
			c.Lines = append(c.Lines, line{Name: name, Colour: colour(i), X: lines[name].x, Y: lines[name].y})
			leg = append(leg, legendItem{Name: name, Colour: colour(i)})
		}
		t := title
		if len(byUnit) > 1 {
			t += " (" + unit + ")"
		}
		out = append(out, chartView{Title: t, Note: "measured windows of every step, in the order they ran", Wide: true, SVG: c.SVG(), Legend: leg})
	}
	return out
}

// unitOf guesses a series' unit from its name's suffix ("_s", "_bytes", "_ms").
func unitOf(name string) string {
	for suffix, unit := range map[string]string{"_s": "s", "_bytes": "bytes", "_ms": "ms", "_mbps": "MB/s", "_per_s": "1/s"} {
		if strings.HasSuffix(name, suffix) {
			return unit
		}
	}
	return ""
}

// MinPointsPerStep is the fewest per-second throughputs a step has, on average, for the
// throughput-over-time chart to be drawn.
const MinPointsPerStep = 4

// throughputOverTime draws each variant's per-second throughput across the run, so that
// warm-up and drift show.
func (e *Experiment) throughputOverTime() (chartView, bool) {
	c := lineChart{Class: "timeseries throughput-time", Wide: true, YLabel: "ops/s", XLabel: "seconds", Numeric: true}
	points, stepsSeen := 0, 0
	for i, v := range e.Variants {
		t0 := v.Run.Result.Meta.Started
		if len(v.Run.Result.Steps) > 0 {
			t0 = v.Run.Result.Steps[0].Window.Start
		}
		var xs, ys []float64
		steps := stepsOf(v)
		for _, st := range steps {
			s, ok := st.Throughput["*"]
			n := min(len(s.T), len(s.V))
			if !ok || n == 0 {
				continue
			}
			// A last point over a sliver of a second (the window's end) is not a rate.
			if n >= 3 && s.T[n-1]-s.T[n-2] < 0.5*(s.T[n-2]-s.T[n-3]) {
				n--
			}
			points += n
			if len(xs) > 0 {
				xs, ys = append(xs, xs[len(xs)-1]), append(ys, math.NaN())
			}
			off := s.Start.Sub(t0).Seconds()
			for j := range n {
				xs, ys = append(xs, off+s.T[j]), append(ys, s.V[j])
			}
			stepsSeen++
		}
		c.Lines = append(c.Lines, line{Name: v.Name, Colour: colour(i), X: xs, Y: ys})
	}
	// Steps of a second or two are dots, not a line over time: no chart then.
	if stepsSeen == 0 || points < MinPointsPerStep*stepsSeen {
		return chartView{}, false
	}
	return chartView{Title: "throughput over time", Note: "per second, measured windows only; gaps are ramp-ups and other variants' steps", Wide: true, SVG: c.SVG(), Legend: e.legend()}, true
}

func stepsOf(v *Variant) []*result.Step {
	var out []*result.Step
	for _, c := range v.Cells {
		if c != nil {
			out = append(out, c.Steps...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Window.Start.Before(out[j].Window.Start) })
	return out
}

func runViewOf(r *Run) runView {
	m := r.Result.Meta
	v := runView{Label: r.Label, Command: result.CommandLine(m.Args), Started: m.Started.UTC().Format("2006-01-02 15:04:05 UTC"), Status: "complete"}
	if !m.Ended.IsZero() {
		v.Duration = m.Ended.Sub(m.Started).Round(time.Second).String()
	}
	if !r.Result.Complete {
		v.Status = "incomplete: " + r.Result.IncompleteReason
	}
	h := m.Host
	var host []string
	for _, part := range []string{h.Hostname, h.OS + "/" + h.Arch, prefixed("kernel ", h.Kernel), h.CPUModel,
		fmt.Sprintf("%d cores", h.Cores), bytesText(h.MemoryBytes), h.GoVersion} {
		if part != "" && part != "/" && part != "0 cores" {
			host = append(host, part)
		}
	}
	v.Host = strings.Join(host, " · ")
	v.Tool = m.Tool + " " + m.ToolVersion
	if m.Merged != nil {
		v.Segments = m.Merged.Lines()
	}
	if m.Server != nil {
		v.Server = "PostgreSQL " + m.Server.Version
		for _, k := range sortedKeys(m.Server.Settings) {
			v.Settings = append(v.Settings, [2]string{k, m.Server.Settings[k]})
		}
	}
	if t := m.Topology; t != nil {
		var parts []string
		if t.Cluster != "" {
			parts = append(parts, "cluster "+t.Cluster)
		}
		if t.Commit != "" {
			parts = append(parts, t.Commit+" commit")
		}
		for _, n := range t.Nodes {
			parts = append(parts, fmt.Sprintf("%s (%s) %s", n.Name, n.Role, n.Addr))
		}
		if t.Listener != "" {
			parts = append(parts, "listener "+t.Listener)
		}
		if t.RoutingList != "" {
			parts = append(parts, "routing list "+t.RoutingList)
		}
		if t.Hosts != "" {
			parts = append(parts, t.Hosts)
		}
		if t.Links != "" {
			parts = append(parts, t.Links)
		}
		v.Topology = strings.Join(parts, " · ")
	}
	return v
}

func bytesText(b uint64) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f GiB RAM", float64(b)/(1<<30))
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
