package analyze

import (
	"fmt"

	"github.com/agbench/agbench/internal/result"
)

// A stall is a stretch of the measured window in which no operation completed although the
// step's rate says many would have: a frozen or unreachable server, a synchronous standby
// down, a lock held, a failover. Its step's figures average over time in which the load made
// no progress, and errors and lost sessions may say nothing of it (a SIGSTOPped primary fails
// no operation; operations still waiting when the window closes are in no histogram).
const (
	// StallMinSec is the shortest stretch without a completed operation that is a stall.
	StallMinSec = 2.0
	// StallMinOps: the stretch is a stall only when the step's mean rate would have completed
	// at least this many operations in it (a scan whose reads take seconds, or TPC-C's think
	// times, complete none for seconds).
	StallMinOps = 20.0
	// StallEndSlackSec: a stall that ends this close to the window's end reached it.
	StallEndSlackSec = 0.5
	// StallTickSlackSec: the ticks that bound a stretch come from a timer that fires a few
	// microseconds to milliseconds late, so two whole empty one-second ticks may span
	// 1.99999 s (measured: a 3 s SIGSTOP of the primary gave ticks at 5.000037 and 7.000034).
	// A stretch this much shorter than StallMinSec still counts.
	StallTickSlackSec = 0.05
)

// VStalled is the verdict of a step whose load made no progress for a while.
const VStalled = "stalled"

// Stall finds, over a step's repeats, the longest run of per-second ticks without a
// completed operation: its length and where it began, in seconds of the window; endFrom is
// where a stall (of any repeat, not only the longest) began that lasted until the window
// closed, when the load was not running (-1: none did). A stretch is no stall when the step's own rate would have completed
// fewer than StallMinOps in it.
func Stall(reps ...result.Step) (sec, from, endFrom float64) {
	endFrom = -1
	for _, st := range reps {
		ts, ok := st.Throughput["*"]
		if !ok || len(ts.T) != len(ts.V) {
			continue
		}
		off := ts.Start.Sub(st.Window.Start).Seconds()
		start := -1
		for i := 0; i <= len(ts.V); i++ {
			if i < len(ts.V) && ts.V[i] == 0 {
				if start < 0 {
					start = i
				}
				continue
			}
			if start < 0 {
				continue
			}
			begin := 0.0
			if start > 0 {
				begin = ts.T[start-1]
			}
			d := ts.T[i-1] - begin
			if d >= StallMinSec-StallTickSlackSec && st.OpsPerSecond()*d >= StallMinOps {
				if d > sec {
					sec, from = d, off+begin
				}
				if i == len(ts.V) && off+ts.T[i-1] >= st.Window.Seconds()-StallEndSlackSec {
					endFrom = off + begin
				}
			}
			start = -1
		}
	}
	return sec, from, endFrom
}

// stalled judges the steps' stalls: the first step (by load) that had one, and how many did.
func stalled(st []Step, loadName string) *Verdict {
	var worst []Step
	for _, s := range st {
		if s.StallSec > 0 {
			worst = append(worst, s)
		}
	}
	if len(worst) == 0 {
		return nil
	}
	s := worst[0]
	msg := fmt.Sprintf("at %s no operation completed for %.1f s (from %.1f s to %.1f s of the window) where its rate (%s/s) would have completed %s",
		count(s.Load, loadName), s.StallSec, s.StallFrom, s.StallFrom+s.StallSec, num(s.Throughput), num(s.Throughput*s.StallSec))
	if len(worst) > 1 {
		msg += fmt.Sprintf(", and at %d more step(s)", len(worst)-1)
	}
	return &Verdict{Code: VStalled, Message: msg + ": the figures average over time in which the load made no progress (a frozen or unreachable server, a synchronous standby down, a lock, a failover)"}
}
