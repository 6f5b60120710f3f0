package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
)

// Charts are drawn here as inline SVG rather than by a JavaScript chart library: the report
// then needs no script at all (its Content-Security-Policy forbids every script and every
// fetch), prints and opens in any browser or mail client, is byte-for-byte deterministic for
// tests, and agbench vendors no asset. Hovering a point shows its value (an SVG <title>).

// Chart geometry, in SVG user units (the SVG scales to its box). Wide charts span the page:
// a wider drawing, not a larger one.
const (
	chartW, wideW, chartH             = 560, 1140, 280
	padLeft, padRight, padTop, padBot = 58, 14, 14, 44
)

// palette colours the variants of an experiment (colour-blind-safe order, Okabe–Ito based).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#555555", "#F0E442"}

// waitColours keeps each wait class's colour the same in every chart.
var waitColours = map[string]string{
	"cpu": "#2e9e5b", "log": "#e8912d", "data_read": "#2f6fb3", "other_io": "#7fb2e5", "lwlock": "#8e63b5",
	"lock": "#d64545", "sync_rep": "#17a2b8", "client": "#b9b9b9", "other": "#6b6b6b",
}

func colour(i int) string { return palette[i%len(palette)] }

func waitColour(class string, i int) string {
	if c, ok := waitColours[strings.ToLower(class)]; ok {
		return c
	}
	return palette[(i+3)%len(palette)]
}

func width(wide bool) int {
	if wide {
		return wideW
	}
	return chartW
}

// line is one series of a line chart; NaN values leave a gap.
type line struct {
	Name, Colour string
	X, Y         []float64
	Dash         bool
}

// mark is a vertical marker at x (the knee, the saturation point, an SLO point).
type mark struct {
	X      float64
	Label  string
	Colour string
}

// lineChart is a chart of lines over a categorical x (XTicks at 0..n-1) or a numeric x.
type lineChart struct {
	Class   string
	Wide    bool
	YLabel  string
	XLabel  string
	XTicks  []string
	Numeric bool
	Lines   []line
	Marks   []mark
}

func (c lineChart) xRange() (lo, hi float64) {
	if !c.Numeric {
		return -0.35, float64(len(c.XTicks)) - 0.65
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, l := range c.Lines {
		for _, x := range l.X {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if math.IsInf(lo, 1) || hi <= lo {
		return 0, 1
	}
	return lo, hi
}

func (c lineChart) yMax() float64 {
	m := 0.0
	for _, l := range c.Lines {
		for _, y := range l.Y {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				m = math.Max(m, y)
			}
		}
	}
	return m
}

// SVG renders the chart.
func (c lineChart) SVG() template.HTML {
	var b strings.Builder
	w := width(c.Wide)
	x0, x1 := c.xRange()
	ticks := niceTicks(c.yMax())
	y1 := ticks[len(ticks)-1]
	px := func(x float64) float64 { return padLeft + (x-x0)/(x1-x0)*float64(w-padLeft-padRight) }
	py := func(y float64) float64 { return chartH - padBot - y/y1*(chartH-padTop-padBot) }
	openSVG(&b, c.Class, w)
	yAxis(&b, ticks, w, py, c.YLabel)
	if c.Numeric {
		for _, t := range niceRange(x0, x1) {
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, px(t), chartH-padBot+16, esc(axisNum(t)))
		}
	} else {
		for i, t := range c.XTicks {
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, px(float64(i)), chartH-padBot+16, esc(t))
		}
	}
	fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%d" text-anchor="middle">%s</text>`, px((x0+x1)/2), chartH-8, esc(c.XLabel))
	for _, l := range c.Lines {
		c.drawLine(&b, l, px, py)
	}
	for i, m := range groupMarks(c.Marks) {
		x := px(m.X)
		fmt.Fprintf(&b, `<g class="mark"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s"/>`, x, x, padTop, chartH-padBot, m.Colour)
		anchor, tx := "start", x+5
		if x > float64(w)*0.7 {
			anchor, tx = "end", x-5
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s" fill="%s">%s</text></g>`, tx, padTop+10+i*14, anchor, m.Colour, esc(m.Label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func (c lineChart) drawLine(b *strings.Builder, l line, px, py func(float64) float64) {
	var d strings.Builder
	pen := false
	for i := range l.Y {
		if math.IsNaN(l.Y[i]) {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f", cmd, px(l.X[i]), py(l.Y[i]))
		pen = true
	}
	dash := ""
	if l.Dash {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(b, `<path class="line" d="%s" stroke="%s"%s><title>%s</title></path>`, d.String(), l.Colour, dash, esc(l.Name))
	if c.Numeric {
		// A point with no neighbour (a step sampled once) is a dot, or it would not show.
		for i := range l.Y {
			prev := i > 0 && !math.IsNaN(l.Y[i-1])
			next := i+1 < len(l.Y) && !math.IsNaN(l.Y[i+1])
			if !math.IsNaN(l.Y[i]) && !prev && !next {
				fmt.Fprintf(b, `<circle class="pt" cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s at %s s: %s</title></circle>`,
					px(l.X[i]), py(l.Y[i]), l.Colour, esc(l.Name), esc(axisNum(l.X[i])), esc(fmtNum(l.Y[i])+" "+c.YLabel))
			}
		}
		return
	}
	for i := range l.Y {
		if math.IsNaN(l.Y[i]) {
			continue
		}
		xl := axisNum(l.X[i])
		if int(l.X[i]) < len(c.XTicks) {
			xl = c.XTicks[int(l.X[i])]
		}
		fmt.Fprintf(b, `<circle class="pt" cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s at %s: %s</title></circle>`,
			px(l.X[i]), py(l.Y[i]), l.Colour, esc(l.Name), esc(analyze.LoadCount(xl, c.XLabel)), esc(fmtNum(l.Y[i])+" "+c.YLabel))
	}
}

func openSVG(b *strings.Builder, class string, w int) {
	fmt.Fprintf(b, `<svg class="chart %s" viewBox="0 0 %d %d" role="img">`, class, w, chartH)
}

// yAxis draws the horizontal grid, its values, the baseline and the axis's label.
func yAxis(b *strings.Builder, ticks []float64, w int, py func(float64) float64, label string) {
	for _, t := range ticks {
		fmt.Fprintf(b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padLeft, w-padRight, py(t), py(t))
		fmt.Fprintf(b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, padLeft-6, py(t)+4, esc(axisNum(t)))
	}
	fmt.Fprintf(b, `<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>`, padLeft, w-padRight, chartH-padBot, chartH-padBot)
	fmt.Fprintf(b, `<text class="label" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, py(ticks[len(ticks)-1]/2), esc(label))
}

// groupMarks joins the marks at the same place in the same colour into one label
// ("knee, saturation (routing=on)").
func groupMarks(ms []mark) []mark {
	var out []mark
	for _, m := range ms {
		label, suffix, _ := strings.Cut(m.Label, " (")
		joined := false
		for i := range out {
			if out[i].X == m.X && out[i].Colour == m.Colour {
				head, tail, _ := strings.Cut(out[i].Label, " (")
				out[i].Label = head + ", " + label + paren(tail)
				joined = true
				break
			}
		}
		if !joined {
			out = append(out, mark{X: m.X, Label: label + paren(suffix), Colour: m.Colour})
		}
	}
	return out
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s
}

// bar is one bar of a stacked bar chart: its label and one value per stack.
type bar struct {
	Label  string
	Values []float64
}

// barGroup is a run of bars under one name (a variant).
type barGroup struct {
	Name string
	Bars []bar
}

// stackedBars is a stacked bar chart: Stacks name the segments, bottom first.
type stackedBars struct {
	Class   string
	Wide    bool
	YLabel  string
	Stacks  []string
	Colours []string
	Groups  []barGroup
}

// SVG renders the chart.
func (c stackedBars) SVG() template.HTML {
	var b strings.Builder
	n, top := 0, 0.0
	for _, g := range c.Groups {
		n += len(g.Bars)
		for _, br := range g.Bars {
			s := 0.0
			for _, v := range br.Values {
				s += v
			}
			top = math.Max(top, s)
		}
	}
	w := width(c.Wide)
	ticks := niceTicks(top)
	y1 := ticks[len(ticks)-1]
	slots := float64(n + len(c.Groups) - 1)
	slotW := float64(w-padLeft-padRight) / math.Max(slots, 1)
	py := func(y float64) float64 { return chartH - padBot - y/y1*(chartH-padTop-padBot) }
	openSVG(&b, c.Class, w)
	yAxis(&b, ticks, w, py, c.YLabel)
	slot := 0.0
	for gi, g := range c.Groups {
		if gi > 0 {
			slot++
		}
		start := slot
		for _, br := range g.Bars {
			x := padLeft + slot*slotW + slotW*0.14
			bw := slotW * 0.72
			base := 0.0
			for si, v := range br.Values {
				if v <= 0 {
					continue
				}
				fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s %s</title></rect>`,
					x, py(base+v), bw, py(base)-py(base+v), c.Colours[si], esc(g.Name), esc(br.Label+" "+c.Stacks[si]), esc(fmtNum(v)), esc(c.YLabel))
				base += v
			}
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, x+bw/2, chartH-padBot+14, esc(br.Label))
			slot++
		}
		mid := padLeft + (start+slot)/2*slotW
		fmt.Fprintf(&b, `<text class="group" x="%.1f" y="%d" text-anchor="middle">%s</text>`, mid, chartH-padBot+30, esc(g.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceTicks returns 0 and round steps (1, 2, 2.5 or 5 × 10^k) up to at least max.
func niceTicks(max float64) []float64 {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return []float64{0, 1}
	}
	raw := max / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var out []float64
	for i := 0; ; i++ {
		v := float64(i) * step
		out = append(out, v)
		if v >= max*(1-1e-9) {
			return out
		}
	}
}

// niceRange returns round ticks between lo and hi.
func niceRange(lo, hi float64) []float64 {
	ticks := niceTicks(hi - lo)
	step := ticks[1] - ticks[0]
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// axisNum prints an axis value briefly (1.5k, 2M).
func axisNum(v float64) string {
	if v == 0 {
		return "0" // also -0, which a range from below zero gives
	}
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return trimZero(fmt.Sprintf("%.1f", v))
	default:
		return trimZero(fmt.Sprintf("%.4f", v))
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func esc(s string) string { return html.EscapeString(s) }

// sparkline is a small chart without axes for the summary: one line per variant over the
// sweep, each ending in a dot.
func sparkline(lines []line, n int) template.HTML {
	const w, h, pad = 300, 64, 6
	top := 0.0
	for _, l := range lines {
		for _, y := range l.Y {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				top = math.Max(top, y)
			}
		}
	}
	if top <= 0 || n < 2 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" viewBox="0 0 %d %d" role="img">`, w, h)
	px := func(x float64) float64 { return pad + x/float64(n-1)*(w-2*pad) }
	py := func(y float64) float64 { return h - pad - y/top*(h-2*pad) }
	for _, l := range lines {
		var d strings.Builder
		pen, lastX, lastY := false, -1.0, 0.0
		for i, y := range l.Y {
			if math.IsNaN(y) {
				pen = false
				continue
			}
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, px(l.X[i]), py(y))
			pen, lastX, lastY = true, px(l.X[i]), py(y)
		}
		fmt.Fprintf(&b, `<path class="line" d="%s" stroke="%s"><title>%s</title></path>`, d.String(), l.Colour, esc(l.Name))
		if lastX >= 0 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, lastX, lastY, l.Colour)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
