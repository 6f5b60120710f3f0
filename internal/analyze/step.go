package analyze

import "sort"

// Step is one load level of a sweep as the analysis sees it. Latencies are in
// milliseconds and cover one operation as the client saw it.
type Step struct {
	// Load is the offered concurrency: virtual users, threads or queue depth.
	Load float64 `json:"load"`
	// Throughput is operations per second over the measured window (mean of repeats).
	Throughput float64 `json:"throughput"`
	// Repeats holds the throughput of each repeat of this load, when it was repeated.
	Repeats []float64 `json:"repeats,omitempty"`
	MeanMs  float64   `json:"mean_ms"`
	P50Ms   float64   `json:"p50_ms"`
	P95Ms   float64   `json:"p95_ms"`
	P99Ms   float64   `json:"p99_ms"`
	P999Ms  float64   `json:"p999_ms"`
	// ThinkMs is the time each virtual user waits between operations.
	ThinkMs float64 `json:"think_ms,omitempty"`
	// WindowSec is the length of the measured window, ramp-up excluded.
	WindowSec float64 `json:"window_sec"`
	// PerSecond is the throughput of each second (or tick) of the measured window.
	PerSecond []float64 `json:"per_second,omitempty"`
	// OpenLoop is set for fixed-rate steps, whose Load is not the concurrency in flight.
	OpenLoop bool `json:"open_loop,omitempty"`
	// Rate is the fixed rate asked of a fixed-rate step (operations per second), and
	// LateStarts the operations (all repeats) that started after their scheduled time.
	Rate       float64 `json:"rate,omitempty"`
	LateStarts int64   `json:"late_starts,omitempty"`
	// DoneRate is the operations a fixed-rate step started per second of its windows
	// (result.DoneRate over its repeats); nil for a closed-loop step or without a window.
	DoneRate *float64 `json:"done_rate,omitempty"`
	// ThinkUnknown is set when users waited between operations for times not recorded
	// (TPC-C keying without a think_ms counter): Little's law cannot be checked.
	ThinkUnknown bool `json:"think_unknown,omitempty"`
	// Ops and Errors count the successful and the failed operations of the window (all
	// repeats); ErrorClasses names the failures' SQLSTATEs with their counts, most first.
	Ops          int64    `json:"ops,omitempty"`
	Errors       int64    `json:"errors,omitempty"`
	ErrorClasses []string `json:"error_classes,omitempty"`
	// SessionSeconds is the time the step's workers were meant to hold a session (workers ×
	// window, summed over repeats); DownSeconds the part of it they were without one, after a
	// session was lost; SessionsLost and Unrestored count the sessions lost, and those still
	// lost when a window closed, which by then had been lost for UnrestoredSeconds (summed).
	SessionSeconds    float64 `json:"session_seconds,omitempty"`
	DownSeconds       float64 `json:"down_seconds,omitempty"`
	SessionsLost      int64   `json:"sessions_lost,omitempty"`
	Unrestored        int64   `json:"unrestored,omitempty"`
	UnrestoredSeconds float64 `json:"unrestored_seconds,omitempty"`
	// InFlight and InFlightOldestSec are the operations still running when a window closed
	// (the most of any repeat) and how long the oldest of them had been (inflight.go).
	InFlight          int64   `json:"in_flight,omitempty"`
	InFlightOldestSec float64 `json:"in_flight_oldest_sec,omitempty"`
	// StallSec is the longest stretch of the window (any repeat) in which no operation
	// completed, StallFrom where it began, in seconds of the window (stall.go).
	StallSec  float64 `json:"stall_sec,omitempty"`
	StallFrom float64 `json:"stall_from,omitempty"`
	// VUStalls are the stretches (any repeat) in which one VU completed no operation while
	// the others went on, longest first; VUsWatched is set when the runner watched the VUs
	// one by one (vustall.go).
	VUStalls   []VUStall `json:"vu_stalls,omitempty"`
	VUsWatched bool      `json:"vus_watched,omitempty"`
	// NothingMeasured is set when the step's operations completed none successfully
	// (measuredNothing): it has no throughput or latency to draw a knee from.
	NothingMeasured bool `json:"nothing_measured,omitempty"`
	// Incomplete says why the step did not complete (result.Step.IncompleteReason: cut by a
	// fault, aborted, failed), "" when it did. An incomplete step is judged for its fault
	// (errors, sessions lost) and left out of every other judgement (incomplete.go).
	Incomplete string `json:"incomplete,omitempty"`
}

// sortedSteps returns the steps ordered by load, dropping those with no load.
func sortedSteps(steps []Step) []Step {
	out := make([]Step, 0, len(steps))
	for _, s := range steps {
		if s.Load > 0 {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Load < out[j].Load })
	return out
}
