package report

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
	"github.com/agbench/agbench/internal/units"
)

// Run is one result file with the label it is shown under.
type Run struct {
	// Label names the run in legends and tables (its folder's name unless set).
	Label string
	// Path is where the result was read from.
	Path   string
	Result *result.Result
	// Analysis is the run's analysis by internal/analyze, per variant; Differences and
	// Comparisons are its comparison of two variants. AnalysedHere is true when the result
	// held none and the report made it.
	Analysis     []VariantAnalysis
	Differences  []string
	Comparisons  []analyze.Verdict
	AnalysedHere bool
	// Readahead is the readahead experiment's section of the run, when it has one.
	Readahead *result.ReadaheadRun
	// stepVerdicts are the verdicts of the steps' own analyses, by position in Result.Steps.
	stepVerdicts map[int][]analyze.Verdict
	// err is the part of the result that could not be read (it names it); Build fails with it.
	err error
}

// NewRun wraps a result read from path, labelled by its folder's name. A result that holds
// no analysis is analysed here (internal/analyze is a pure function of the result). A part
// of the result that cannot be read (a section of Extra, the analysis) is kept, naming the
// part, and Build returns it.
func NewRun(path string, r *result.Result) *Run {
	dir := runDir(path)
	label := filepath.Base(dir)
	if m := studyFolder.FindStringSubmatch(filepath.Base(filepath.Dir(dir))); m != nil {
		label = m[1] // a study's run: <study>/NN-name/<time>-command
	}
	run := &Run{Label: label, Path: path, Result: r}
	run.err = run.read()
	return run
}

// read decodes the parts of the result the report shows beyond its common schema: the
// analysis (made here when the result holds none), the steps' verdicts and the readahead
// experiment's section.
func (r *Run) read() error {
	raw := r.Result.Analysis
	// A drill's cycles are not steps of a load curve: knee, steadiness, Little's law and the
	// window rule say nothing of them (the drill's own verdict is in its section).
	if len(raw) == 0 && len(r.Result.Steps) > 0 && r.Result.Meta.Command != "drill" {
		b, ok, err := analyseHere(r.Result, paramLoadName([]*Run{r}))
		if err != nil {
			return err
		}
		if ok {
			raw, r.AnalysedHere = b, true
		}
	}
	if err := r.decodeAnalysis(raw); err != nil {
		return err
	}
	if err := r.decodeStepVerdicts(); err != nil {
		return err
	}
	for i := range r.Result.Steps {
		if _, err := r.Result.Steps[i].StaleProbes(); err != nil {
			return err
		}
		if _, err := r.Result.Steps[i].Terminals(); err != nil {
			return err
		}
	}
	var err error
	r.Readahead, err = r.Result.ReadaheadRun()
	return err
}

// studyFolder matches the folder `agbench run` gives each experiment: NN-name.
var studyFolder = regexp.MustCompile(`^\d\d-(.+)$`)

// runDir is a run's folder, from its path (the folder, or the result file in it).
func runDir(path string) string {
	path = filepath.Clean(path)
	if filepath.Base(path) == result.FileName {
		return filepath.Dir(path)
	}
	return path
}

// studyTime is the time `agbench run` puts after a study's name in its folder.
var studyTime = regexp.MustCompile(`-\d{8}T\d{6}Z$`)

// analyseHere runs internal/analyze on a result read from a file. A result file is outside
// bytes: should the analysis panic on one, the report goes on without it; a section of the
// result the analysis cannot read is an error naming it.
func analyseHere(r *result.Result, loadName string) (raw []byte, ok bool, err error) {
	defer func() {
		if recover() != nil {
			raw, ok, err = nil, false, nil
		}
	}()
	run, err := analyze.FromResult(r, analyze.Options{LoadName: loadName})
	if err != nil {
		return nil, false, err
	}
	b, merr := json.Marshal(run)
	return b, merr == nil, nil
}

// Experiment is what one command measured, over one or more runs of it: one line per
// variant (per run and compared variant) in its charts and one column group in its tables.
type Experiment struct {
	// Command is the command that ran ("stress", "tpcc run"); Title names the experiment
	// (the command, and what tells it from another of the same command).
	Command, Title string
	Runs           []*Run
	// LoadName names the swept knob ("threads", "VUs"); Sweep is true when the steps walk a
	// load (two or more points), false for a list of steps (seeding phases, one-off runs).
	LoadName string
	Sweep    bool
	// Points are the sweep's positions (x axis), in order.
	Points   []string
	Variants []*Variant
	// Counters are the counter names found in any step, headline ones first.
	Counters []string
}

// Variant is one line of an experiment: a compared variant of one run.
type Variant struct {
	// Name is the variant as shown ("routing=on", or "<run>: routing=on" with several runs).
	Name    string
	Variant string
	Run     *Run
	// Cells holds the variant's figures at each of the experiment's points (nil when it did
	// not run there).
	Cells []*Figures
}

// Figures is one variant at one point of a sweep: its steps (repeats) merged.
type Figures struct {
	Load  float64
	Label string
	Steps []*result.Step
	// Seconds is the mean measured window; Throughput the mean of the repeats' ops/s.
	Seconds    float64
	Throughput float64
	// Repeats holds each repeat's ops/s (one value without repeats).
	Repeats []float64
	Count   int64
	Errors  int64
	// MBps is the mb_per_s or server_mb_per_s counter when there is one, else the bytes the
	// client received per second (10^6; shown as "MB/s recv", HasBytes).
	MBps float64
	// Latency merges every operation type's histogram of every repeat.
	Latency result.Hist
	// Ops is each operation type merged over the repeats, by name.
	Ops      map[string]*result.Op
	Counters map[string]float64
	// Waits is the mean number of sessions in each wait class (from "pg.<node>.wait.<class>").
	Waits map[string]float64
	// DeviceAwaitMs and DeviceQueue are the means of the device series, when sampled.
	DeviceAwaitMs, DeviceQueue float64
	HasDevice                  bool
	// Seedings are the seeding sections of the steps that have one (seed's results).
	Seedings []*result.Seeding
}

// headlineCounters are shown in the articles' tables, in this order, when a result has them.
var headlineCounters = []string{"nopm", "tpm", "iops", "read_iops", "write_iops", "mb_per_s", result.ServerMBps, "read_mb_per_s", "write_mb_per_s", "rows_per_s"}

// Build groups runs into experiments: runs of the same command become one experiment whose
// variants are shown side by side; each command gets its own.
func Build(runs []*Run) ([]*Experiment, error) {
	var exps []*Experiment
	byKey := map[string]*Experiment{}
	for _, r := range runs {
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", r.Path, r.err)
		}
		cmd := r.Result.Meta.Command
		if cmd == "" {
			cmd = "run"
		}
		// Runs of one command sweeping the same knobs are one experiment, side by side;
		// the same command sweeping other knobs (disk: threads, then queue depth) is another.
		key := cmd + "|" + strings.Join(sweptParams(r), ",")
		e := byKey[key]
		if e == nil {
			e = &Experiment{Command: cmd}
			byKey[key] = e
			exps = append(exps, e)
		}
		e.Runs = append(e.Runs, r)
	}
	titles := map[string]int{}
	for _, e := range exps {
		titles[e.Command]++
	}
	for _, e := range exps {
		distinctLabels(e.Runs)
		e.Title = e.Command
		if titles[e.Command] > 1 && len(e.Runs) == 1 {
			e.Title = e.Command + " · " + e.Runs[0].Label
		} else if titles[e.Command] > 1 {
			e.Title = e.Command + " · " + strings.Join(sweptParams(e.Runs[0]), ", ")
		}
		if err := e.build(); err != nil {
			return nil, err
		}
	}
	return exps, nil
}

// distinctLabels gives runs of one experiment that share a label (the same experiment of
// two studies: ror-hosts/01-stress and ror-quick/01-stress) their study's name before it, so
// that no legend, table or headline shows two variants under one name.
func distinctLabels(runs []*Run) {
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Label]++
	}
	for _, r := range runs {
		if seen[r.Label] < 2 {
			continue
		}
		if study, ok := studyOf(r); ok {
			r.Label = study + " " + r.Label
		}
	}
}

// sweptParams are the params whose value changes between a run's steps, the compared one
// left out.
func sweptParams(r *Run) []string {
	first := map[string]string{}
	varies := map[string]bool{}
	for i, st := range r.Result.Steps {
		ck := compareKey(&st)
		for k, v := range st.Params {
			if k == ck {
				continue
			}
			if i == 0 {
				first[k] = v
			} else if first[k] != v {
				varies[k] = true
			}
		}
	}
	return sortedKeys(varies)
}

// pointKey identifies a position of the sweep across runs: its load and its other params;
// its label says them, or its load where they would not (loadLabel).
func pointKey(st *result.Step, compareKey string, seg *result.Segment) (key, label string, load float64) {
	var parts []string
	for _, k := range sortedKeys(st.Params) {
		if k == compareKey {
			continue
		}
		parts = append(parts, k+"="+st.Params[k])
	}
	load = float64(st.Concurrency())
	key = fmt.Sprintf("%g|%s", load, strings.Join(parts, ","))
	label = strings.Join(parts, " ")
	if l, ok := loadLabel(st, seg, compareKey); ok {
		label = l
	}
	return key, label, load
}

// loadLabel names a step by its load where its params alone would not say it, and its
// other params: in a segment's run (seg) its share of the whole run's load, the first
// whole-number param ("segment 1/3: 3 of 8 threads"); a step of terminals by its terminals
// over the pool's sessions ("30 terminals over 3 sessions", also in a result of an older
// agbench that counted the pool as "vus"). ok is false for VUs of a whole run.
func loadLabel(st *result.Step, seg *result.Segment, compareKey string) (label string, ok bool) {
	l := result.LoadOf(st, seg, "", "")
	if seg == nil && !l.Terminals() {
		return "", false
	}
	knob := ""
	for _, k := range sortedKeys(st.Params) {
		if _, err := strconv.Atoi(st.Params[k]); err == nil && k != compareKey {
			knob = k
			break
		}
	}
	if !l.Terminals() {
		name := knob
		if strings.EqualFold(knob, "vus") {
			name = "VUs"
		}
		l = result.LoadOf(st, seg, knob, name)
	}
	parts := []string{l.String()}
	for _, k := range sortedKeys(st.Params) {
		if k != compareKey && k != knob && k != result.TerminalsKnob && k != result.SessionsKnob {
			parts = append(parts, k+"="+st.Params[k])
		}
	}
	return strings.Join(parts, " "), true
}

func (e *Experiment) build() error {
	e.LoadName = e.loadName()
	type slot struct {
		key, label string
		load       float64
		first      int
	}
	slots := map[string]*slot{}
	var order []*slot
	counters := map[string]bool{}
	for _, r := range e.Runs {
		for i := range r.Result.Steps {
			st := &r.Result.Steps[i]
			key, label, load := pointKey(st, compareKey(st), r.Result.Meta.Segment)
			if slots[key] == nil {
				s := &slot{key: key, label: label, load: load, first: len(order)}
				slots[key] = s
				order = append(order, s)
			}
			for c := range st.Counters {
				counters[c] = true
			}
		}
	}
	// Points in load order (then first appearance), so runs that swept in another order line up.
	sort.SliceStable(order, func(i, j int) bool { return order[i].load < order[j].load })
	index := map[string]int{}
	loads := map[float64]int{}
	for i, s := range order {
		index[s.key] = i
		loads[s.load]++
	}
	// A sweep walks distinct loads; otherwise the params tell the points apart.
	e.Sweep = len(order) >= 2 && len(loads) == len(order)
	for _, s := range order {
		if e.Sweep {
			e.Points = append(e.Points, fmtNum(s.load))
		} else if s.label != "" {
			e.Points = append(e.Points, s.label)
		} else {
			e.Points = append(e.Points, fmt.Sprintf("%s %s", fmtNum(s.load), e.LoadName))
		}
	}
	e.Counters = orderCounters(counters)

	for _, r := range e.Runs {
		var names []string
		groups := map[string][]*result.Step{}
		for i := range r.Result.Steps {
			st := &r.Result.Steps[i]
			if _, ok := groups[st.Variant]; !ok {
				names = append(names, st.Variant)
			}
			groups[st.Variant] = append(groups[st.Variant], st)
		}
		names = orderVariants(names, r.Result.Meta)
		for _, vn := range names {
			v := &Variant{Variant: vn, Run: r, Name: variantName(e, r, vn), Cells: make([]*Figures, len(order))}
			byPoint := map[int][]*result.Step{}
			for _, st := range groups[vn] {
				key, _, _ := pointKey(st, compareKey(st), r.Result.Meta.Segment)
				byPoint[index[key]] = append(byPoint[index[key]], st)
			}
			for pi, steps := range byPoint {
				// The figures are the complete repeats' (all, none having completed: the
				// metric is then absent, incompleteCell); the steps are every repeat, for
				// the tables of faults and sessions.
				c, err := newFigures(analyze.CompleteOf(steps))
				if err != nil {
					return fmt.Errorf("%s: %w", r.Path, err)
				}
				c.Steps = steps
				c.Label = e.Points[pi]
				v.Cells[pi] = c
			}
			e.Variants = append(e.Variants, v)
		}
	}
	return nil
}

// compareKey is the param that names the step's variant ("routing" of "routing=on").
func compareKey(st *result.Step) string {
	k, _, _ := strings.Cut(st.Variant, "=")
	return k
}

func variantName(e *Experiment, r *Run, v string) string {
	if len(e.Runs) == 1 {
		if v == "" {
			return e.Command
		}
		return v
	}
	if v == "" {
		return r.Label
	}
	return r.Label + ": " + v
}

// loadName is the analysis's name for the load, else the param that always equals the VUs.
func (e *Experiment) loadName() string {
	for _, r := range e.Runs {
		for _, a := range r.Analysis {
			if a.LoadName != "" && (a.LoadName != "VUs" || !r.AnalysedHere) {
				return a.LoadName
			}
		}
	}
	return paramLoadName(e.Runs)
}

// paramLoadName names the load by the param that equals the VUs in every step ("threads",
// "vus" as "VUs"), or "VUs".
func paramLoadName(runs []*Run) string {
	candidates := map[string]bool{}
	first := true
	for _, r := range runs {
		for _, st := range r.Result.Steps {
			match := map[string]bool{}
			for k, v := range st.Params {
				if v == strconv.Itoa(st.Concurrency()) && k != compareKey(&st) {
					match[k] = true
				}
			}
			if first {
				candidates, first = match, false
				continue
			}
			for k := range candidates {
				if !match[k] {
					delete(candidates, k)
				}
			}
		}
	}
	names := sortedKeys(candidates)
	for _, pref := range preferredLoads {
		if candidates[pref] {
			names = []string{pref}
			break
		}
	}
	if len(names) > 0 {
		if strings.EqualFold(names[0], "vus") {
			return "VUs"
		}
		return names[0]
	}
	return "VUs"
}

// preferredLoads name the load when several params equal the VUs (a disk sweep of threads
// at queue depth 1 has threads = outstanding IOs).
var preferredLoads = []string{"threads", "vus", "clients", "qd"}

func orderCounters(set map[string]bool) []string {
	var out []string
	for _, c := range headlineCounters {
		if set[c] {
			out = append(out, c)
			delete(set, c)
		}
	}
	return append(out, sortedKeys(set)...)
}

// newFigures merges the repeats of one variant at one point.
func newFigures(steps []*result.Step) (*Figures, error) {
	m := &figureMerge{
		c: &Figures{Steps: steps, Load: float64(steps[0].Concurrency()), Ops: map[string]*result.Op{}, Counters: map[string]float64{}, Waits: map[string]float64{}},
		n: float64(len(steps)), perOp: map[string][]result.Hist{}, waitSum: map[string]float64{}, counted: map[string]int{},
	}
	for _, st := range steps {
		if err := m.add(st); err != nil {
			return nil, err
		}
	}
	return m.finish()
}

// figureMerge gathers the repeats of one cell as newFigures reads them, step by step.
type figureMerge struct {
	c *Figures
	n float64 // the number of repeats
	// all and perOp are the latency histograms to merge, of every operation and by name.
	all   []result.Hist
	perOp map[string][]result.Hist
	// bytes the client received and secs the windows' seconds, over every repeat.
	bytes int64
	secs  float64
	// awaits and queues are the device figures seen; waitSum the wait classes' means.
	awaits, queues []float64
	waitSum        map[string]float64
	// counted is how many repeats measured each counter: one a repeat lacks is absent
	// there, not 0, so a counter is the mean of the repeats that measured it.
	counted map[string]int
}

// add takes one repeat's seeding, window, throughput, operations, counters and sampled
// figures.
func (m *figureMerge) add(st *result.Step) error {
	c := m.c
	sd, err := st.Seeding()
	if err != nil {
		return err
	}
	if sd != nil {
		c.Seedings = append(c.Seedings, sd)
	}
	sec := st.Window.Seconds()
	m.secs += sec
	c.Seconds += sec / m.n
	tp := st.OpsPerSecond()
	c.Repeats = append(c.Repeats, tp)
	c.Throughput += tp / m.n
	m.addOps(st)
	for k, v := range st.Counters {
		c.Counters[k] += v
		m.counted[k]++
	}
	m.addSampled(st)
	return nil
}

// addOps adds a repeat's operations, by name and in all.
func (m *figureMerge) addOps(st *result.Step) {
	c := m.c
	for name, op := range st.Ops {
		if op == nil {
			continue
		}
		agg := c.Ops[name]
		if agg == nil {
			agg = &result.Op{}
			c.Ops[name] = agg
		}
		agg.Count += op.Count
		agg.Errors += op.Errors
		agg.Retries += op.Retries
		agg.Rows += op.Rows
		agg.Bytes += op.Bytes
		c.Count += op.Count
		c.Errors += op.Errors
		m.bytes += op.Bytes
		m.perOp[name] = append(m.perOp[name], op.Latency)
		m.all = append(m.all, op.Latency)
	}
}

// addSampled adds a repeat's wait classes and device figures. Samplers store each series'
// window mean as a counter of the same name; a series without one is averaged here.
func (m *figureMerge) addSampled(st *result.Step) {
	figures := map[string]float64{}
	for k, ts := range st.Series {
		figures[k] = stats.Mean(ts.V)
	}
	for k, v := range st.Counters {
		figures[k] = v
	}
	for k, v := range figures {
		switch {
		case waitClass(k) != "":
			m.waitSum[waitClass(k)] += v / m.n
		case isAwait(k):
			m.awaits = append(m.awaits, v)
		case isQueue(k):
			m.queues = append(m.queues, v)
		}
	}
}

// finish turns the sums into the cell's means and merges its histograms.
func (m *figureMerge) finish() (*Figures, error) {
	c := m.c
	for k, n := range m.counted {
		c.Counters[k] /= float64(n)
	}
	for k, v := range m.waitSum {
		c.Waits[k] = v
	}
	if len(m.awaits)+len(m.queues) > 0 {
		c.HasDevice = true
		c.DeviceAwaitMs, c.DeviceQueue = maxOf(m.awaits), maxOf(m.queues)
	}
	if v, ok := c.Counters[result.MBps]; ok {
		c.MBps = v
	} else if v, ok := c.Counters[result.ServerMBps]; ok {
		c.MBps = v
	} else if m.secs > 0 {
		c.MBps = float64(m.bytes) / m.secs / 1e6
	}
	var err error
	if c.Latency, err = result.MergeHists(m.all...); err != nil {
		return nil, err
	}
	for name, hs := range m.perOp {
		if c.Ops[name].Latency, err = result.MergeHists(hs...); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// waitClass returns the wait class of a sampler figure "pg.<node>.wait.<class>" (sessions
// of a node in that class), or "" for any other figure. Figures about a standby seen from
// the primary ("pg.<node>.standby.<name>...") are not waits.
func waitClass(k string) string {
	_, class, ok := result.ParsePGWait(k)
	if !ok {
		return ""
	}
	return strings.ToLower(class)
}

// isAwait and isQueue find the device figures: the OS sampler's "disk.<dev>.await_ms" and
// ".queue", or the storage tester's "device_*_await_ms" and "device_avg_queue".
func isAwait(k string) bool {
	if _, fig, ok := result.ParseDiskName(k); ok {
		return fig == result.DiskAwaitMs
	}
	return k == result.DeviceReadAwaitMs || k == result.DeviceWriteAwaitMs
}

func isQueue(k string) bool {
	if _, fig, ok := result.ParseDiskName(k); ok {
		return fig == result.DiskQueue
	}
	return k == result.DeviceAvgQueue
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	if math.IsInf(m, -1) {
		return 0
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The metric and column of the bytes the client received per second, where no counter
// measured MB/s (a stress or scan through a listener, where the servers' MB/s is absent):
// a figure of its own, never shown as the servers' "MB/s".
const (
	recvMBps      = "recv_mb_per_s"
	recvMBpsLabel = "MB/s recv"
)

// HasBytes is true when no counter measured MB/s and some cell received bytes (the
// client's MB/s recv is worth a column).
func (e *Experiment) HasBytes() bool {
	for _, c := range e.Counters {
		if c == "mb_per_s" || c == result.ServerMBps {
			return false
		}
	}
	for _, v := range e.Variants {
		for _, c := range v.Cells {
			if c != nil && c.MBps > 0 {
				return true
			}
		}
	}
	return false
}

// HasWaits is true when any cell has a wait profile.
func (e *Experiment) HasWaits() bool {
	for _, v := range e.Variants {
		for _, c := range v.Cells {
			if c != nil && len(c.Waits) > 0 {
				return true
			}
		}
	}
	return false
}

// HasDevice is true when any cell has device figures.
func (e *Experiment) HasDevice() bool {
	for _, v := range e.Variants {
		for _, c := range v.Cells {
			if c != nil && c.HasDevice {
				return true
			}
		}
	}
	return false
}

// ms converts a histogram value (microseconds) to milliseconds.
func ms(us int64) float64 { return float64(us) / 1000 }

// fmtNum prints a number the way a table shows it: integers plain, others with three
// significant digits, large ones with thousands separated.
func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return units.GroupDigits(strconv.FormatFloat(v, 'f', 0, 64))
	case math.Abs(v) >= 1000:
		return units.GroupDigits(strconv.FormatFloat(v, 'f', 0, 64))
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// orderVariants puts a run's variants in the order its --compare listed them (the runner
// shuffles the order of the steps inside a repeat, so the first step may be any variant);
// variants not found there keep the order they first ran in.
func orderVariants(names []string, m result.Meta) []string {
	spec := ""
	if v, ok := m.Config["compare"].(string); ok {
		spec = v
	}
	for i, a := range m.Args {
		if a == "--compare" && i+1 < len(m.Args) {
			spec = m.Args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--compare="); ok {
			spec = v
		}
	}
	key, values, ok := strings.Cut(spec, "=")
	if !ok {
		return names
	}
	rank := map[string]int{}
	for i, v := range strings.Split(values, ",") {
		rank[key+"="+strings.TrimSpace(v)] = i
	}
	out := append([]string(nil), names...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, okI := rank[out[i]]
		rj, okJ := rank[out[j]]
		if okI && okJ {
			return ri < rj
		}
		return okI && !okJ
	})
	return out
}
