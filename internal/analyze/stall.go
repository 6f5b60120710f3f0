package analyze

import (
	"fmt"

	"github.com/agbench/agbench/internal/result"
)

// A stall is a stretch of the measured window in which no operation completed although the
// step's operations take far less: a frozen or unreachable server, a lock held, a failover.
// Its step's figures average over time in which the load made no progress; errors and lost
// sessions may say nothing of it (a SIGSTOPped primary fails no operation).
const (
	// StallMinSec is the shortest stretch without a completed operation that is a stall.
	StallMinSec = 2.0
	// StallLatencyShare: the stretch is a stall only when the step's median operation took
	// less than this share of it (a scan whose reads take seconds completes none for seconds).
	StallLatencyShare = 0.1
)

// VStalled is the verdict of a step whose load made no progress for a while.
const VStalled = "stalled"

// longestStall finds, over a step's repeats, the longest run of per-second ticks without a
// completed operation: its length and where it began, in seconds of the window.
func longestStall(reps []result.Step) (sec, from float64) {
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
			if start >= 0 {
				begin := 0.0
				if start > 0 {
					begin = ts.T[start-1]
				}
				if d := ts.T[i-1] - begin; d > sec {
					sec, from = d, off+begin
				}
				start = -1
			}
		}
	}
	return sec, from
}

// stalled judges the steps' stalls: the first step (by load) that had one, and how many did.
func stalled(st []Step, loadName string) *Verdict {
	var worst []Step
	for _, s := range st {
		if s.StallSec >= StallMinSec && s.P50Ms > 0 && s.P50Ms < StallLatencyShare*1000*s.StallSec {
			worst = append(worst, s)
		}
	}
	if len(worst) == 0 {
		return nil
	}
	s := worst[0]
	msg := fmt.Sprintf("at %s no operation completed for %.1f s (from %.1f s to %.1f s of the window) while an operation's median took %s ms",
		count(s.Load, loadName), s.StallSec, s.StallFrom, s.StallFrom+s.StallSec, fmtNum(s.P50Ms))
	if len(worst) > 1 {
		msg += fmt.Sprintf(", and at %d more step(s)", len(worst)-1)
	}
	return &Verdict{Code: VStalled, Message: msg + ": the figures average over time in which the load made no progress (a frozen or unreachable server, a lock, a failover)"}
}
