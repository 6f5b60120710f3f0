package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/stats"
)

// Options say how to read a result: the swept knob's name and the throughput's unit for
// sentences, objectives, and facts the result cannot tell (read intent, for instance).
type Options struct {
	LoadName string
	Unit     string
	SLOs     []SLO
	// Facts overrides: fields set here win over what is read from the result.
	Facts Facts
}

// Run is the analysis of a whole result: one Analysis per compared variant (one when
// nothing is compared) and, for two variants, their comparison at each load.
type Run struct {
	Variants    []VariantAnalysis `json:"variants"`
	Comparisons []Verdict         `json:"comparisons,omitempty"`
	// Differences name the winner at each load where the variants' spreads do not overlap.
	Differences []string `json:"differences,omitempty"`
}

// VariantAnalysis is the analysis of the steps of one variant ("" when nothing is compared).
type VariantAnalysis struct {
	Variant string   `json:"variant,omitempty"`
	Input   Input    `json:"input"`
	Result  Analysis `json:"analysis"`
}

// Attach analyses a result and stores the analysis in r.Analysis. A section of the result
// that cannot be read is an error naming it, and nothing is stored.
func Attach(r *result.Result, o Options) (*Run, error) {
	run, err := FromResult(r, o)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	raw, err := json.Marshal(run)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	r.Analysis = raw
	return run, nil
}

// FromResult analyses a result: steps are grouped by variant, repeats of a point merged.
// A section of the result it reads (Extra) that does not decode is an error naming the
// section (a *result.ExtraError), never an empty part of the analysis.
func FromResult(r *result.Result, o Options) (*Run, error) {
	if o.LoadName == "" {
		o.LoadName = "VUs"
	}
	byVariant := map[string][]result.Step{}
	var order []string
	for _, st := range r.Steps {
		if _, ok := byVariant[st.Variant]; !ok {
			order = append(order, st.Variant)
		}
		byVariant[st.Variant] = append(byVariant[st.Variant], st)
	}
	dev, err := diskDeviceOf(r)
	if err != nil {
		return nil, err
	}
	run := &Run{}
	for _, v := range order {
		in := Input{LoadName: o.LoadName, Unit: o.Unit, SLOs: o.SLOs}
		if in.Facts, err = factsOf(r, byVariant[v], o.Facts); err != nil {
			return nil, err
		}
		if in.Steps, in.Evidence, err = stepsOf(r, byVariant[v], dev); err != nil {
			return nil, err
		}
		run.Variants = append(run.Variants, VariantAnalysis{Variant: v, Input: in, Result: Analyze(in)})
	}
	if len(order) == 2 {
		if v := sharedHostVerdict(r, order, r.Meta.Host.Cores); v != nil {
			run.Comparisons = append(run.Comparisons, *v)
		}
		run.compare(byVariant[order[0]], byVariant[order[1]], order, o.LoadName, HeadlineOfSteps(r.Steps))
	}
	return run, nil
}

// stepsOf turns the result's steps of one variant into analysis steps (repeats of a point
// merged) and the samplers' evidence for each. dev names the disk tester's device
// (diskDeviceOf), "" when unknown.
func stepsOf(r *result.Result, steps []result.Step, dev string) ([]Step, []Evidence, error) {
	byPoint := map[int][]result.Step{}
	var points []int
	for _, st := range steps {
		if _, ok := byPoint[st.Point]; !ok {
			points = append(points, st.Point)
		}
		byPoint[st.Point] = append(byPoint[st.Point], st)
	}
	sort.Ints(points)
	keying := false
	if v, ok := r.Meta.Config["keying"].(bool); ok {
		keying = v
	}
	var out []Step
	var ev []Evidence
	for _, p := range points {
		reps := completeOf(byPoint[p])
		s := stepOf(reps, keying)
		s.Incomplete = incompleteReason(reps)
		if s.Load <= 0 {
			continue
		}
		out = append(out, s)
		var es []Evidence
		for _, st := range reps {
			e, err := evidenceOf(st, dev)
			if err != nil {
				return nil, nil, err
			}
			es = append(es, e)
		}
		e := meanEvidence(es)
		e.Load = s.Load
		ev = append(ev, e)
	}
	return out, ev, nil
}

func stepOf(reps []result.Step, keying bool) Step {
	first := reps[0]
	s := Step{Load: float64(first.Concurrency()), OpenLoop: first.Rate > 0, Rate: first.Rate}
	var hists []result.Hist
	var think, window float64
	thinkKnown := !keying
	classes := map[string]int64{}
	for _, st := range reps {
		s.Repeats = append(s.Repeats, st.OpsPerSecond())
		s.LateStarts += st.LateStarts
		window += st.Window.Seconds() / float64(len(reps))
		for _, op := range st.Ops {
			if op == nil { // a result file's "op": null
				continue
			}
			hists = append(hists, op.Latency)
			s.Ops += op.Count
			s.Errors += op.Errors
		}
		for _, e := range st.Errors {
			classes[e.SQLState] += e.Count
		}
		s.SessionSeconds += float64(st.Concurrency()) * st.Window.Seconds()
		if r := st.Reconnects; r != nil {
			s.DownSeconds += r.DownSeconds
			s.SessionsLost += r.Lost
			s.Unrestored += r.Unrestored
			s.UnrestoredSeconds += r.UnrestoredSeconds
		}
		if v, ok := st.Counters["think_ms"]; ok {
			think += v / float64(len(reps))
			thinkKnown = true
		}
		if ts, ok := st.Throughput["*"]; ok && len(s.PerSecond) == 0 {
			s.PerSecond = append([]float64(nil), ts.V...)
		}
	}
	s.ErrorClasses = errorClasses(classes)
	s.StallSec, s.StallFrom, _ = Stall(reps...)
	s.VUStalls, s.VUsWatched = VUStalls(reps...)
	for _, st := range reps {
		s.InFlight = max(s.InFlight, st.InFlight)
		s.InFlightOldestSec = max(s.InFlightOldestSec, st.InFlightOldestSeconds)
	}
	ptrs := make([]*result.Step, len(reps))
	for i := range reps {
		ptrs[i] = &reps[i]
	}
	s.NothingMeasured = MeasuredNothing(ptrs)
	if r, ok := result.DoneRate(ptrs...); ok {
		s.DoneRate = &r
	}
	s.Throughput = stats.Mean(s.Repeats)
	if len(reps) == 1 {
		s.Repeats = nil
	}
	s.WindowSec, s.ThinkMs, s.ThinkUnknown = window, think, !thinkKnown
	if h, err := result.MergeHists(hists...); err == nil && h.Count > 0 {
		const us = 1000.0
		s.MeanMs, s.P50Ms, s.P95Ms = recordedMean(hists, h.Mean)/us, float64(h.P50)/us, float64(h.P95)/us
		s.P99Ms, s.P999Ms = float64(h.P99)/us, float64(h.P999)/us
	}
	return s
}

// errorClasses lists SQLSTATEs with their counts ("57P01×2"), most frequent first.
func errorClasses(m map[string]int64) []string {
	codes := make([]string, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if m[codes[i]] != m[codes[j]] {
			return m[codes[i]] > m[codes[j]]
		}
		return codes[i] < codes[j]
	})
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = fmt.Sprintf("%s×%d", c, m[c])
	}
	return out
}

// evidenceOf reads one step's sampler figures: wait classes summed over nodes, the machine's
// CPU, the busiest watched device, the load generator's CPU, and the most lagging standby.
// dev names the disk tester's device (diskDeviceOf), "" when unknown.
func evidenceOf(st result.Step, dev string) (Evidence, error) {
	c := withSeriesMeans(st)
	e := Evidence{Load: float64(st.Concurrency()), WaitsAbsent: true}
	for k, v := range c {
		if _, class, ok := result.ParsePGWait(k); ok {
			addWait(&e.Waits, class, v)
			e.WaitsAbsent = false
		}
		if node, standby, fig, ok := result.ParsePGStandby(k); ok && fig == result.PGReplayLagSeconds && v >= e.ReplayLagSec {
			e.ReplayLagSec, e.Standby = v, standby
			e.LagGrowth = c[result.PGStandbyName(node, standby, result.PGReplayLagGrowth)]
		}
	}
	var err error
	if e.TopWaits, err = topWaitsOf(&st); err != nil {
		return e, err
	}
	if e.LagAbsent, err = lagAbsentOf(&st); err != nil {
		return e, err
	}
	if e.Host, err = hostEvidenceOf(&st, c); err != nil {
		return e, err
	}
	e.CPUBusy, e.Steal = c[result.OSCPUBusy], c[result.OSCPUSteal]
	if x, err := st.Sample(); err == nil && x != nil && len(x.Nodes) > 0 {
		e.WaitsAbsent = false // a database sampler ran, whether or not it saw a wait
		e.Away = awayOf(x, e.Load)
	}
	if _, ok := c[result.OSCPUBusy]; !ok { // the disk tester's own names
		_, user := c[result.MachineCPUUser]
		e.CPUBusy, e.Steal = c[result.MachineCPUUser]+c[result.MachineCPUSystem], c[result.MachineCPUSteal]
		e.CPUAbsent = !user
	}
	if w := st.Window.Seconds(); w > 0 {
		e.LoadGenCores = (st.Client.UserSeconds + st.Client.SystemSeconds) / w
	}
	e.LoadGenShare = st.Client.Utilisation
	e.Hosts = hostsOf(c)
	if e.NodeHosts, err = nodeHostsOf(&st, c); err != nil {
		return e, err
	}
	e.Device = deviceOf(c, dev)
	if _, ok := c[result.DeviceIOPS]; ok { // a storage test: it knows what it moved
		e.ExpectedDeviceMBps = c[result.MBps]
	} else if e.Device.Name != "" {
		e.ExpectedDeviceMBps = pgIOMBps(c)
	}
	return e, nil
}

// withSeriesMeans returns the step's counters, completed by the window means of the OS
// sampler's series (os.cpu.*, disk.<dev>.*) and of the node_exporters' (host.<node>.*)
// that have no counter: a step that kept only series (seed's, for one) still shows its CPU
// and devices. The step is not changed.
func withSeriesMeans(st result.Step) map[string]float64 {
	c := st.Counters
	for k, ts := range st.Series {
		if _, ok := c[k]; ok || !strings.HasPrefix(k, result.OSCPUPrefix) && !isDiskName(k) && !isExporterName(k) {
			continue
		}
		m, ok := windowMean(ts, st.Window)
		if !ok {
			continue
		}
		if len(c) == len(st.Counters) { // copy once, on the first addition
			c = make(map[string]float64, len(st.Counters)+len(st.Series))
			for ck, cv := range st.Counters {
				c[ck] = cv
			}
		}
		c[k] = m
	}
	return c
}

// windowMean is the mean of a series' finite points inside the window (all of its points
// when the window is unknown or holds none).
func windowMean(ts result.TimeSeries, w result.Window) (float64, bool) {
	mean := func(inWindow bool) (float64, bool) {
		sum, n := 0.0, 0
		for i, v := range ts.V {
			if math.IsNaN(v) || math.IsInf(v, 0) || i >= len(ts.T) && inWindow {
				continue
			}
			if inWindow {
				at := ts.Start.Add(time.Duration(ts.T[i] * float64(time.Second)))
				if at.Before(w.Start) || at.After(w.End) {
					continue
				}
			}
			sum, n = sum+v, n+1
		}
		if n == 0 {
			return 0, false
		}
		return sum / float64(n), true
	}
	if w.Seconds() > 0 && !ts.Start.IsZero() {
		if m, ok := mean(true); ok {
			return m, true
		}
	}
	return mean(false)
}

// topWaitsOf reads the samplers' top wait events of each node (the step's sample section)
// and sums them over nodes.
func topWaitsOf(st *result.Step) ([]result.WaitEvent, error) {
	x, err := st.Sample()
	if x == nil || err != nil {
		return nil, err
	}
	var es []Evidence
	for _, n := range x.Nodes {
		es = append(es, Evidence{TopWaits: n.TopWaits})
	}
	merged := mergeWaitEvents(es)
	for i := range merged {
		merged[i].Sessions *= float64(len(es)) // a sum over nodes, not a mean
	}
	return merged, nil
}

// lagAbsent is why the samplers could not measure a standby's lag in the step (the first
// reason a node's sample section gives), or "".
func lagAbsentOf(st *result.Step) (string, error) {
	x, err := st.Sample()
	if x == nil || err != nil {
		return "", err
	}
	for _, name := range slices.Sorted(maps.Keys(x.Nodes)) {
		for _, l := range x.Nodes[name].Lag {
			if l.Absent != "" {
				return l.Absent, nil
			}
		}
	}
	return "", nil
}

// pgIOMBps is the database's own IO from pg_stat_io plus WAL, summed over nodes (on one
// host they share the device); 0 when pg_stat_io was not there (before 16).
func pgIOMBps(c map[string]float64) float64 {
	total, seen := 0.0, false
	for k, v := range c {
		_, fig, ok := result.ParsePGName(k)
		if !ok {
			continue
		}
		switch fig {
		case result.PGIOReadMBps, result.PGIOWriteMBps:
			total, seen = total+v, true
		case result.PGWALMBps:
			total += v
		}
	}
	if !seen {
		return 0
	}
	return total
}

func addWait(w *Waits, class string, v float64) {
	switch class {
	case result.WaitCPU:
		w.CPU += v
	case result.WaitLog:
		w.Log += v
	case result.WaitDataRead:
		w.DataRead += v
	case result.WaitOtherIO:
		w.OtherIO += v
	case result.WaitLWLock:
		w.LWLock += v
	case result.WaitLock:
		w.Lock += v
	case result.WaitClient:
		w.Client += v
	case result.WaitSyncRep:
		w.SyncRep += v
	default:
		w.Other += v
	}
}

// unnamedDevice names the disk tester's device when the result does not: sentences say
// "device under test 90% busy".
const unnamedDevice = "under test"

// diskDeviceOf is the device the disk tester measured (its run section's device), "" when
// the result does not say.
func diskDeviceOf(r *result.Result) (string, error) {
	x, err := r.DiskRun()
	if x == nil || err != nil {
		return "", err
	}
	return x.Device, nil
}

// deviceOf picks the busiest device the OS sampler watched, or the disk tester's device
// (named dev, or unnamedDevice when unknown).
func deviceOf(c map[string]float64, dev string) Device {
	if _, ok := c[result.DeviceIOPS]; ok {
		if dev == "" {
			dev = unnamedDevice
		}
		return Device{Name: dev, IOPS: c[result.DeviceIOPS], ReadMBps: c[result.DeviceMBps],
			AwaitMs: math.Max(c[result.DeviceReadAwaitMs], c[result.DeviceWriteAwaitMs]), Queue: c[result.DeviceAvgQueue], Util: c[result.DeviceUtil]}
	}
	var best Device
	for k := range c {
		name, fig, ok := result.ParseDiskName(k)
		if !ok || fig != result.DiskUtil {
			continue
		}
		d := Device{Name: name, IOPS: c[result.DiskName(name, result.DiskIOPS)], ReadMBps: c[result.DiskName(name, result.DiskReadMBps)],
			WriteMBps: c[result.DiskName(name, result.DiskWriteMBps)], AwaitMs: c[result.DiskName(name, result.DiskAwaitMs)],
			Queue: c[result.DiskName(name, result.DiskQueue)], Util: c[result.DiskName(name, result.DiskUtil)]}
		// Busiest by IOPS, then (samplers that keep no IOPS, seed's) by utilisation and MB/s.
		if best.Name == "" || d.IOPS > best.IOPS || d.IOPS == best.IOPS && (d.Util > best.Util ||
			d.Util == best.Util && (d.MBps() > best.MBps() || d.MBps() == best.MBps() && d.Name < best.Name)) {
			best = d
		}
	}
	return best
}

// factsOf reads run-level facts: a storage test and its cache mode, the database size,
// shared_buffers and the memory available for the page cache. Overrides win. A storage
// test's workload (its config's "workload") that does not decode is an error naming it.
func factsOf(r *result.Result, steps []result.Step, over Facts) (Facts, error) {
	var f Facts
	if _, ok := r.Extra[result.ExtraDisk]; ok || r.Meta.Command == "disk" {
		f.Storage = true
		var w struct {
			Direct bool `json:"direct"`
		}
		raw, err := json.Marshal(r.Meta.Config["workload"])
		if err == nil {
			err = json.Unmarshal(raw, &w)
		}
		if err != nil {
			return f, fmt.Errorf("meta config \"workload\": %w", err)
		}
		f.DirectIO = w.Direct
	}
	if len(steps) > 0 {
		c := steps[0].Counters
		f.PageCacheBytes = int64(c[result.OSMemAvailable])
		for k, v := range c {
			_, fig, ok := result.ParsePGName(k)
			switch {
			case !ok:
			case fig == result.PGDatabaseBytes && !f.Storage:
				f.DatasetBytes = max(f.DatasetBytes, int64(v))
			case fig == result.PGSharedBuffersBytes:
				f.SharedBuffersBytes = max(f.SharedBuffersBytes, int64(v))
			}
		}
	}
	ri := readIntentOf(r, steps)
	f.ReadIntentSessions, f.ReadIntentOnStandby, f.ReadIntentUnit, f.ReadIntentPrimaries = ri.all, ri.onStandby, ri.unit, ri.primaries
	f.ReadIntentAsked = ri.asked
	if ri.list != nil && ri.all > ri.onStandby+ri.asked {
		f.ReadIntentList = ri.list.text // named only where the verdict judges against it
	}
	f.Cores = r.Meta.Host.Cores
	if len(steps) > 0 {
		if err := nodeHostMemoryFacts(&f, &steps[0]); err != nil {
			return f, err
		}
	}
	if f.PageCacheBytes == 0 && f.DatasetBytes > 0 {
		f.PageCacheBytes = int64(r.Meta.Host.MemoryBytes)
	}
	if f.PageCacheBytes == 0 && f.SharedBuffersBytes == 0 {
		f.DatasetBytes = 0 // nothing known of memory: no verdict either way
	}
	if len(steps) > 0 {
		hostMemoryFacts(&f, steps[0].Counters)
	}
	mergeFacts(&f, over)
	return f, nil
}

func mergeFacts(f *Facts, o Facts) {
	if o.Storage {
		f.Storage, f.DirectIO = true, o.DirectIO
	}
	if o.DatasetBytes > 0 {
		f.DatasetBytes = o.DatasetBytes
	}
	if o.SharedBuffersBytes > 0 {
		f.SharedBuffersBytes = o.SharedBuffersBytes
	}
	if o.PageCacheBytes > 0 {
		f.PageCacheBytes = o.PageCacheBytes
	}
	if o.Cores > 0 {
		f.Cores = o.Cores
	}
	if o.ReadIntentSessions > 0 {
		f.ReadIntentSessions, f.ReadIntentOnStandby = o.ReadIntentSessions, o.ReadIntentOnStandby
		f.ReadIntentUnit, f.ReadIntentPrimaries = o.ReadIntentUnit, o.ReadIntentPrimaries
		f.ReadIntentAsked, f.ReadIntentList = o.ReadIntentAsked, o.ReadIntentList
	}
}

// compare compares two variants at every load both measured by the rule for "different"
// (Differ) on the run's headline figure h: a winner where their spreads are apart, and
// otherwise a verdict saying "no difference measured" or "too little data to compare".
func (run *Run) compare(a, b []result.Step, names []string, loadName string, h Headline) {
	byLoad := func(steps []result.Step) map[int][]*result.Step {
		out := map[int][]*result.Step{}
		for i := range steps {
			out[steps[i].Concurrency()] = append(out[steps[i].Concurrency()], &steps[i])
		}
		return out
	}
	sa, sb := byLoad(a), byLoad(b)
	var loads []int
	for l := range sa {
		if _, ok := sb[l]; ok {
			loads = append(loads, l)
		}
	}
	sort.Ints(loads)
	for _, l := range loads {
		what := h.Label + " at " + count(float64(l), loadName)
		if h.Name == HeadlineOps {
			what = "throughput at " + count(float64(l), loadName)
		}
		d := Differ(SideOf(names[0], sa[l], h.Of), SideOf(names[1], sb[l], h.Of))
		if v := d.Verdict(what); v != nil {
			run.Comparisons = append(run.Comparisons, *v)
		} else {
			run.Differences = append(run.Differences, what+": "+d.Sentence())
		}
	}
}

// WriteText prints every variant's analysis (knee line, USL, saturation sentence, validity
// verdicts) and the comparison of variants: the common ending of every workload's output.
func (run *Run) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("\nanalysis\n")
	for _, v := range run.Variants {
		if len(run.Variants) > 1 {
			fmt.Fprintf(&b, "[%s]\n", v.Variant)
		}
		if err := v.Result.WriteText(&b); err != nil {
			return err
		}
	}
	if len(run.Comparisons)+len(run.Differences) > 0 {
		b.WriteString("comparison:\n")
		for _, d := range run.Differences {
			b.WriteString("  " + d + "\n")
		}
		for _, c := range run.Comparisons {
			fmt.Fprintf(&b, "  ! %s: %s\n", c.Code, c.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// isDiskName says whether a figure is a block device's ("disk.<device>.<figure>").
func isDiskName(k string) bool {
	_, _, ok := result.ParseDiskName(k)
	return ok
}
