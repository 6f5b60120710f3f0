package analyze

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/units"
)

// Validity thresholds. The article: "30-second runs measure warmup, not steady state. Run
// for 5 to 10 minutes minimum"; a database at least twice the memory for a storage test.
const (
	// MinWindowSec is the shortest measured window per step not flagged as too short.
	MinWindowSec = 60
	// MinSteadySamples is the fewest per-second throughputs on which steadiness is judged.
	MinSteadySamples = 5
	// TrendLimit is the largest change of throughput across the window, by linear trend, as a
	// share of its mean, for a step to count as steady.
	TrendLimit = 0.20
	// CVLimit is the largest coefficient of variation of per-second throughput for a step to
	// count as steady.
	CVLimit = 0.30
	// ForeignIOShare and ForeignIOFloorMBps: device traffic beyond what the workload accounts
	// for, by this share and this many MB/s, is foreign (someone else's IO).
	ForeignIOShare     = 0.50
	ForeignIOFloorMBps = 1.0
	// CacheBypassShare: a storage test whose device traffic is below this share of what it
	// moved was served from the page cache.
	CacheBypassShare = 0.50
	// ErrorShareLimit is the share of failed operations in a step above which its figures
	// describe a run with failures (result.ErrorShareLimit: the step is also incomplete).
	ErrorShareLimit = result.ErrorShareLimit
)

// Verdict codes.
const (
	VFitsInMemory     = "fits-in-memory"
	VWindowShort      = "window-short"
	VNotSteady        = "not-steady"
	VLoadGenSaturated = "loadgen-saturated"
	VReadIntent       = "read-intent-on-primary"
	VPageCache        = "page-cache"
	VLittle           = "littles-law"
	VSteal            = "steal"
	VBusyHost         = "busy-host"
	VForeignIO        = "foreign-io"
	VNoDifference     = "no-difference"
	VErrors           = "errors"
	VSessionsLost     = "sessions-lost"
)

// Verdict is one way the run may not measure what it claims, or (NotJudged) a rule that
// could not be applied to it.
type Verdict struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// NotJudged is set when a fact the rule rests on was absent (no sampler, a remote
	// server, too few samples): Message then says "not judged: why". It is not a finding
	// against the run, and it never counts as the verdict having fired.
	NotJudged bool `json:"not_judged,omitempty"`
}

// notJudged is the verdict a rule gives when it cannot judge: why names the absent fact.
func notJudged(code, why string) Verdict {
	return Verdict{Code: code, Message: "not judged: " + why, NotJudged: true}
}

// Fired returns the verdicts that fired (those judged), in order.
func Fired(vs []Verdict) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if !v.NotJudged {
			out = append(out, v)
		}
	}
	return out
}

// Facts are what is known of the run as a whole.
type Facts struct {
	// Storage is set for storage tests (disk); DirectIO when they bypassed the page cache.
	Storage  bool `json:"storage,omitempty"`
	DirectIO bool `json:"direct_io,omitempty"`
	// DatasetBytes is the database (or test files') size; SharedBuffersBytes the database's
	// cache; PageCacheBytes the memory the OS could cache it in (MemAvailable at the start).
	DatasetBytes       int64 `json:"dataset_bytes,omitempty"`
	SharedBuffersBytes int64 `json:"shared_buffers_bytes,omitempty"`
	PageCacheBytes     int64 `json:"page_cache_bytes,omitempty"`
	// MemoryHost names the node's host whose available memory PageCacheBytes is (the least
	// of the nodes' hosts read from their node_exporters); "" when it is this machine's.
	MemoryHost string `json:"memory_host,omitempty"`
	// MemoryOneHost is true when every node whose host was read is on that one machine
	// (their exporters describe one): there is no least of several.
	MemoryOneHost bool `json:"memory_one_host,omitempty"`
	// PageCacheNodes is how many nodes' copies of the data share PageCacheBytes (the nodes
	// one machine carries, each with a database of its own); 0 or 1: one node's.
	PageCacheNodes int `json:"page_cache_nodes,omitempty"`
	// HostMemoryBytes is the smallest memory budget of a node's modelled host (its control
	// group's limit, shared_buffers and page cache included); 0 when the nodes had none.
	HostMemoryBytes int64 `json:"host_memory_bytes,omitempty"`
	// Cores is the number of CPUs of the machine the samplers watched (0: unknown).
	Cores int `json:"cores,omitempty"`
	// ReadIntentSessions counts sessions (or transactions) that declared read intent,
	// ReadIntentOnStandby those that found themselves on a standby (pg_is_in_recovery()).
	ReadIntentSessions  int64 `json:"read_intent_sessions,omitempty"`
	ReadIntentOnStandby int64 `json:"read_intent_on_standby,omitempty"`
	// ReadIntentUnit says what was counted ("sessions", "transactions"); ReadIntentPrimaries
	// names the nodes, not standbys, where read intent landed (landing.go).
	ReadIntentUnit      string   `json:"read_intent_unit,omitempty"`
	ReadIntentPrimaries []string `json:"read_intent_primaries,omitempty"`
	// ReadIntentAsked counts the read intent that landed on the primary where the routing
	// list of a routing=on variant asks for it (the primary in the list's first entry, as
	// (('standby1','primary')) spreads read intent over both): no fault of the run's.
	// ReadIntentList names the list a routed variant's landings were judged against.
	ReadIntentAsked int64  `json:"read_intent_asked,omitempty"`
	ReadIntentList  string `json:"read_intent_list,omitempty"`
}

// Check returns every validity verdict that fires on the run, in a fixed order.
func Check(steps []Step, ev []Evidence, f Facts, loadName string) []Verdict {
	all := sortedSteps(steps)
	st := judgedSteps(all) // verdicts on figures judge only complete steps that measured some
	noSampler := unsampled(ev, f)
	out := fired(nothingMeasured(all, loadName), incomplete(all, loadName), noSampler, fitsInMemory(f), windowShort(st, loadName))
	out = append(out, steadiness(st, loadName)...)
	out = append(out, fired(failedShare(all, loadName), sessionsLost(all, loadName), stalled(st, loadName), vuStalled(st, loadName),
		inFlight(st, loadName), loadGenSaturated(judgedEvidence(ev, st), f.Cores, loadName), rateNotKept(st, loadName),
		readIntentVerdict(f))...)
	if f.Storage {
		out = append(out, pageCache(f, ev, loadName)...)
	}
	out = append(out, fired(littleFails(st, loadName))...)
	if v := steal(ev, loadName); v.Code != "" {
		out = append(out, v)
	}
	if v := busyHost(ev, f, loadName); v != nil && (noSampler == nil || !v.NotJudged) { // one line says what no sampler judged
		out = append(out, *v)
	}
	return append(out, fired(foreignIO(ev, loadName))...)
}

// fired returns the verdicts given, in order, leaving out the rules that gave none (nil).
func fired(vs ...*Verdict) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// pageCacheEach is the page cache one node's copy of the data may hold: the machine's, or
// its share when several nodes' copies share it.
func (f Facts) pageCacheEach() int64 {
	if f.PageCacheNodes > 1 {
		return f.PageCacheBytes / int64(f.PageCacheNodes)
	}
	return f.PageCacheBytes
}

// fitsInMemory is the verdict on a dataset that fits in a node's memory (its modelled
// host's budget when it had one), or nil.
func fitsInMemory(f Facts) *Verdict {
	switch {
	case f.DatasetBytes > 0 && f.HostMemoryBytes > 0 && f.DatasetBytes <= f.SharedBuffersBytes+f.PageCacheBytes:
		return &Verdict{Code: VFitsInMemory, Message: fmt.Sprintf("the dataset (%s) fits in a node's memory budget of %s (shared_buffers %s + page cache %s): reads come from RAM, so this measured memory and CPU, not storage reads",
			units.FormatBytes(f.DatasetBytes), units.FormatBytes(f.HostMemoryBytes), units.FormatBytes(f.SharedBuffersBytes), units.FormatBytes(f.PageCacheBytes))}
	case f.DatasetBytes > 0 && f.MemoryHost != "" && f.DatasetBytes <= f.SharedBuffersBytes+f.pageCacheEach():
		return fitsOnNodeHosts(f)
	case f.MemoryHost != "": // judged on the nodes' hosts: it does not fit in a node's share
		return nil
	case f.DatasetBytes > 0 && f.DatasetBytes <= f.SharedBuffersBytes+f.PageCacheBytes:
		return &Verdict{Code: VFitsInMemory, Message: fmt.Sprintf("the dataset (%s) fits in memory (shared_buffers %s + page cache %s): reads come from RAM, so this measured memory and CPU, not storage reads",
			units.FormatBytes(f.DatasetBytes), units.FormatBytes(f.SharedBuffersBytes), units.FormatBytes(f.PageCacheBytes))}
	}
	return nil
}

// windowShort is the verdict on measured windows shorter than MinWindowSec, or nil.
func windowShort(st []Step, loadName string) *Verdict {
	short := stepsWhere(st, func(s Step) bool { return s.WindowSec > 0 && s.WindowSec < MinWindowSec })
	if len(short) == 0 {
		return nil
	}
	at := loadList(short) + " " + loadName
	if len(short) == 1 {
		at = count(short[0].Load, loadName)
	}
	return &Verdict{Code: VWindowShort, Message: fmt.Sprintf("measured window of %.0f s at %s is shorter than %d s: it may measure warm-up, not steady state",
		short[0].WindowSec, at, MinWindowSec)}
}

// littleFails is the verdict on the first load where Little's law does not hold, or nil.
func littleFails(st []Step, loadName string) *Verdict {
	for _, l := range CheckLittle(st) {
		if l.Holds {
			continue
		}
		inFlight := ""
		if l.InFlightMax > 0 {
			inFlight = fmt.Sprintf(", %.2f at most with the operations still running at the window's end", l.Implied+l.InFlightMax)
		}
		return &Verdict{Code: VLittle, Message: fmt.Sprintf("Little's law fails at %s: throughput × (latency + think) = %.2f%s, not %s (ratio %.2f): time was spent outside the measured operations or counted twice",
			count(l.Load, loadName), l.Implied, inFlight, fmtNum(l.Load), l.Ratio)}
	}
	return nil
}

// foreignIO is the verdict on the first load whose device moved more than the workload
// accounts for, or nil.
func foreignIO(ev []Evidence, loadName string) *Verdict {
	for _, e := range ev {
		if x := e.ExpectedDeviceMBps; x > 0 && e.Device.MBps() > x*(1+ForeignIOShare)+ForeignIOFloorMBps {
			return &Verdict{Code: VForeignIO, Message: fmt.Sprintf("device %s moved %.1f MB/s at %s but the workload accounts for %.1f MB/s: other IO shared the device",
				e.Device.Name, e.Device.MBps(), count(e.Load, loadName), x)}
		}
	}
	return foreignIOOnNodeHosts(ev, loadName)
}

// failedShare judges the steps' failed operations: the first step (by load) where more
// than ErrorShareLimit of its operations failed, and how many steps did so.
func failedShare(st []Step, loadName string) *Verdict {
	var worst []Step
	for _, s := range st {
		if all := s.Ops + s.Errors; all > 0 && float64(s.Errors) > ErrorShareLimit*float64(all) {
			worst = append(worst, s)
		}
	}
	if len(worst) == 0 {
		return nil
	}
	s := worst[0]
	msg := fmt.Sprintf("%d of %d operations failed (%s) at %s", s.Errors, s.Ops+s.Errors, pct(float64(s.Errors)/float64(s.Ops+s.Errors)), count(s.Load, loadName))
	if len(s.ErrorClasses) > 0 {
		msg += ", SQLSTATE " + strings.Join(s.ErrorClasses, " ")
	}
	if len(worst) > 1 {
		msg += fmt.Sprintf(", and more than %s at %d more step(s)", pct(ErrorShareLimit), len(worst)-1)
	}
	return &Verdict{Code: VErrors, Message: msg + ": the figures describe a run with failures (a failover, a lost server, refused sessions)"}
}

// sessionsLost judges the time the steps' workers spent without a session: the first step
// (by load) where it was more than ErrorShareLimit of the time they were meant to hold one,
// or where sessions were still lost when the window closed (result.StillLost).
func sessionsLost(st []Step, loadName string) *Verdict {
	var worst []Step
	for _, s := range st {
		r := result.Reconnects{Unrestored: s.Unrestored, UnrestoredSeconds: s.UnrestoredSeconds}
		if (s.SessionSeconds > 0 && s.DownSeconds > ErrorShareLimit*s.SessionSeconds) || r.StillLost() {
			worst = append(worst, s)
		}
	}
	if len(worst) == 0 {
		return nil
	}
	s := worst[0]
	msg := fmt.Sprintf("at %s %d session(s) were lost and the workers were without one for %.1f s", count(s.Load, loadName), s.SessionsLost, s.DownSeconds)
	if s.SessionSeconds > 0 {
		msg += fmt.Sprintf(" of %.1f (%s)", s.SessionSeconds, pct(s.DownSeconds/s.SessionSeconds))
	}
	if s.Unrestored > 0 {
		msg += fmt.Sprintf(", %d still lost when the window closed", s.Unrestored)
	}
	if len(worst) > 1 {
		msg += fmt.Sprintf(", and at %d more step(s)", len(worst)-1)
	}
	return &Verdict{Code: VSessionsLost, Message: msg + ": the figures count time in which part of the load could not run (a lost server, a failover)"}
}

func pageCache(f Facts, ev []Evidence, loadName string) []Verdict {
	if !f.DirectIO {
		return []Verdict{{Code: VPageCache, Message: "the storage test used buffered IO: it went through the page cache and measured memory as much as the device"}}
	}
	for _, e := range ev {
		if x := e.ExpectedDeviceMBps; x > ForeignIOFloorMBps && e.Device.Name != "" && e.Device.MBps() < CacheBypassShare*x {
			return []Verdict{{Code: VPageCache, Message: fmt.Sprintf("at %s the test moved %.1f MB/s but device %s saw %.1f MB/s: a cache served the rest", count(e.Load, loadName), x, e.Device.Name, e.Device.MBps())}}
		}
	}
	return nil
}

// unsteady says why a per-second throughput series is not steady, or "" when it is.
func unsteady(ps []float64) string {
	if len(ps) < MinSteadySamples {
		return ""
	}
	m, sd := stat.MeanStdDev(ps, nil)
	if m <= 0 {
		return ""
	}
	xs := make([]float64, len(ps))
	for i := range xs {
		xs[i] = float64(i)
	}
	_, beta := stat.LinearRegression(xs, ps, nil, false)
	if change := beta * float64(len(ps)-1) / m; math.Abs(change) > TrendLimit {
		return fmt.Sprintf("it trended %+.0f%% of its mean across the window (%s in the first second, %s in the last; limit ±%.0f%%)",
			100*change, num(ps[0]), num(ps[len(ps)-1]), 100*TrendLimit)
	}
	if cv := sd / m; cv > CVLimit {
		return fmt.Sprintf("per-second throughput varied by %.0f%% (coefficient of variation; limit %.0f%%)", 100*cv, 100*CVLimit)
	}
	return ""
}

func stepsWhere(st []Step, f func(Step) bool) []Step {
	var out []Step
	for _, s := range st {
		if f(s) {
			out = append(out, s)
		}
	}
	return out
}

func loadList(st []Step) string {
	s := ""
	for i, x := range st {
		if i > 0 {
			s += ","
		}
		s += fmtNum(x.Load)
	}
	return s
}

// ratioOf is a winner's median a over the other side's b; 0 (no ratio) when b is not
// above 0, where a ratio would be infinite or meaningless.
func ratioOf(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
