package merge

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/segment"
)

// clientCounters are the step counters each segment counts of its own operations, which
// add up; every other counter is the servers' (buffer hits, server-side NOPM, lag), which
// every segment read from the same servers over the same window, and is the lowest
// segment's.
var clientCounters = map[string]bool{
	result.TPCCNOPM: true, result.TPCCTPM: true, result.TPCCPrimaryTPM: true, result.TPCCRolledBack: true,
	result.ReadTxOnStandby: true, result.ReadTxOnPrimary: true,
}

// mergeSteps merges the segments' steps of the same index; a step a segment lacks (it
// failed before) makes the merged step incomplete, naming the segment.
func mergeSteps(segs []Input, of int) ([]result.Step, error) {
	n := 0
	for _, s := range segs {
		n = max(n, len(s.Result.Steps))
	}
	out := make([]result.Step, 0, n)
	for i := 0; i < n; i++ {
		var parts []*result.Step
		var idx, lacking []int
		for _, s := range segs {
			if i < len(s.Result.Steps) {
				parts = append(parts, &s.Result.Steps[i])
				idx = append(idx, s.Result.Meta.Segment.Index)
			} else {
				lacking = append(lacking, s.Result.Meta.Segment.Index)
			}
		}
		st, err := mergeStep(parts, idx)
		if err != nil {
			return nil, err
		}
		if len(parts) < of {
			st.VUs = wholeLoad(parts, idx, of, st.VUs)
		}
		if len(lacking) > 0 {
			st.Complete = false
			st.IncompleteReason = joinReasons(st.IncompleteReason, fmt.Sprintf("segment(s) %s did not run this step", ints(lacking)))
		}
		if len(segs) < of {
			st.Complete = false
			st.IncompleteReason = joinReasons(st.IncompleteReason, fmt.Sprintf("%d of %d segments merged", len(segs), of))
		}
		out = append(out, st)
	}
	return out, nil
}

// wholeLoad is the VUs the whole run ran in a step that some segments lack: the step's
// param (threads, vus) whose value gives every segment held exactly the share it ran. The
// sum of the segments held (sum) when no param does, or more than one value would.
func wholeLoad(parts []*result.Step, idx []int, of, sum int) int {
	whole := 0
	for _, v := range parts[0].Params {
		n, err := strconv.Atoi(v)
		if err != nil || n < of || n == whole {
			continue
		}
		fits := true
		for k, p := range parts {
			if (segment.Segment{Index: idx[k], Of: of}).Count(n) != p.VUs {
				fits = false
				break
			}
		}
		if fits {
			if whole != 0 {
				return sum
			}
			whole = n
		}
	}
	if whole == 0 {
		return sum
	}
	return whole
}

// mergeStep merges one step's parts (of the segments idx, lowest first).
func mergeStep(parts []*result.Step, idx []int) (result.Step, error) {
	b := parts[0]
	st := result.Step{Index: b.Index, Point: b.Point, Variant: b.Variant, Repeat: b.Repeat, Params: b.Params,
		Iterations: b.Iterations, RampupSeconds: b.RampupSeconds, Window: b.Window, VUQuietMinSeconds: b.VUQuietMinSeconds,
		Series: b.Series, Extra: b.Extra, Counters: map[string]float64{}, Ops: map[string]*result.Op{}, Complete: true}
	maps.Copy(st.Counters, b.Counters)
	var rate float64
	for k, p := range parts {
		if p.Index != b.Index || p.Variant != b.Variant || !maps.Equal(p.Params, b.Params) {
			return st, agerr.BadInputf("step %d: segment %d ran %s, segment %d %s", b.Index+1, idx[0], b.Knobs(), idx[k], p.Knobs())
		}
		st.VUs += p.VUs
		rate += p.Rate
		st.LateStarts += p.LateStarts
		st.InFlight += p.InFlight
		st.InFlightOldestSeconds = math.Max(st.InFlightOldestSeconds, p.InFlightOldestSeconds)
		st.Window.Start = earliest(st.Window.Start, p.Window.Start)
		if p.Window.End.After(st.Window.End) {
			st.Window.End = p.Window.End
		}
		st.VUQuiet = append(st.VUQuiet, p.VUQuiet...)
		if err := addOps(st.Ops, p.Ops); err != nil {
			return st, agerr.BadInputf("step %d of segment %d: %v", b.Index+1, idx[k], err)
		}
		if k > 0 {
			for name, v := range p.Counters {
				if clientCounters[name] {
					st.Counters[name] += v
				}
			}
		}
		addClient(&st.Client, p.Client)
		st.Sessions = addSessions(st.Sessions, p.Sessions)
		st.Errors = addErrors(st.Errors, p.Errors)
		st.Reconnects = addReconnects(st.Reconnects, p.Reconnects)
		st.ErrorSamples = addSamples(st.ErrorSamples, p.ErrorSamples)
		for _, w := range p.Warnings {
			st.Warnings = append(st.Warnings, fmt.Sprintf("segment %d: %s", idx[k], w))
		}
		if !p.Complete {
			st.Complete = false
			st.IncompleteReason = joinReasons(st.IncompleteReason, fmt.Sprintf("segment %d: %s", idx[k], p.IncompleteReason))
		}
	}
	if err := mergeTerminals(&st, parts, idx); err != nil {
		return st, err
	}
	// A rate split N ways adds back up to the rate given, but for the float's last digits.
	st.Rate = math.Round(rate*1e9) / 1e9
	sort.SliceStable(st.VUQuiet, func(i, j int) bool { return st.VUQuiet[i].VU < st.VUQuiet[j].VU })
	sort.SliceStable(st.Errors, func(i, j int) bool { return st.Errors[i].Count > st.Errors[j].Count })
	if len(st.Counters) == 0 {
		st.Counters = nil
	}
	if t := st.Totals(); t.Count+t.Errors > 0 && st.Client.UserSeconds+st.Client.SystemSeconds > 0 {
		st.Client.PerOpMicros = (st.Client.UserSeconds + st.Client.SystemSeconds) * 1e6 / float64(t.Count+t.Errors)
	}
	st.Throughput = alignSeries(parts, func(p *result.Step) map[string]result.TimeSeries { return p.Throughput })
	st.ErrorThroughput = alignSeries(parts, func(p *result.Step) map[string]result.TimeSeries { return p.ErrorThroughput })
	return st, nil
}

// addOps adds one segment's operations into acc: counts summed, histograms merged.
func addOps(acc, ops map[string]*result.Op) error {
	for name, o := range ops {
		if o == nil {
			continue
		}
		a := acc[name]
		if a == nil {
			a = &result.Op{Latency: result.Hist{Unit: result.LatencyUnit}}
			acc[name] = a
		}
		a.AddCounts(o)
		h, err := result.MergeHists(a.Latency, o.Latency)
		if err != nil {
			return fmt.Errorf("operation %s: %w", name, err)
		}
		a.Latency = h
		if o.ErrorLatency != nil {
			var prev result.Hist
			if a.ErrorLatency != nil {
				prev = *a.ErrorLatency
			}
			h, err := result.MergeHists(prev, *o.ErrorLatency)
			if err != nil {
				return fmt.Errorf("operation %s's errors: %w", name, err)
			}
			a.ErrorLatency = &h
		}
	}
	return nil
}

// addClient adds one load generator's CPU: seconds summed; the utilisation is the busiest
// load generator's, which is what a saturated load generator is judged by.
func addClient(acc *result.ClientCPU, c result.ClientCPU) {
	acc.UserSeconds += c.UserSeconds
	acc.SystemSeconds += c.SystemSeconds
	if c.Utilisation >= acc.Utilisation {
		acc.Utilisation, acc.Cap = c.Utilisation, c.Cap
	}
}

func addSessions(acc, ss []result.Sessions) []result.Sessions {
	for _, s := range ss {
		i := slices.IndexFunc(acc, func(a result.Sessions) bool { return a.Node == s.Node && a.InRecovery == s.InRecovery })
		if i < 0 {
			c := s
			if s.Ops != nil {
				n := *s.Ops
				c.Ops = &n
			}
			acc = append(acc, c)
			continue
		}
		acc[i].Count += s.Count
		if acc[i].Ops == nil || s.Ops == nil {
			acc[i].Ops = nil // a part without counts leaves the whole unknown
		} else {
			*acc[i].Ops += *s.Ops
		}
	}
	return acc
}

func addErrors(acc, es []result.ErrorClass) []result.ErrorClass {
	for _, e := range es {
		found := false
		for i := range acc {
			if acc[i].SQLState == e.SQLState {
				acc[i].Count += e.Count
				acc[i].First = earliest(acc[i].First, e.First)
				if e.Last.After(acc[i].Last) {
					acc[i].Last = e.Last
				}
				found = true
				break
			}
		}
		if !found {
			acc = append(acc, e)
		}
	}
	return acc
}

func addReconnects(acc, r *result.Reconnects) *result.Reconnects {
	if r == nil {
		return acc
	}
	if acc == nil {
		c := *r
		return &c
	}
	acc.Lost += r.Lost
	acc.Count += r.Count
	acc.Failed += r.Failed
	acc.Unrestored += r.Unrestored
	acc.DownSeconds += r.DownSeconds
	acc.UnrestoredSeconds += r.UnrestoredSeconds
	acc.MaxDownSeconds = math.Max(acc.MaxDownSeconds, r.MaxDownSeconds)
	acc.First = earliest(acc.First, r.First)
	if r.Last.After(acc.Last) {
		acc.Last, acc.LastError = r.Last, r.LastError
	}
	return acc
}

// maxErrorSamples is how many distinct error messages a merged step keeps, as a run's does.
const maxErrorSamples = 5

func addSamples(acc, ss []string) []string {
	for _, s := range ss {
		if len(acc) < maxErrorSamples && !slices.Contains(acc, s) {
			acc = append(acc, s)
		}
	}
	return acc
}

func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
