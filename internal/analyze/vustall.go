package analyze

import (
	"fmt"

	"github.com/agbench/agbench/internal/result"
)

// One VU can make no progress for seconds while the step's others go on: its session waits
// for a row or advisory lock another holds, it landed on a standby that is frozen, or a
// partition cut it off from its node. The step's total throughput never drops to zero, so
// `stalled` cannot see it, and its figures average over a session that did nothing. The
// runner records each VU's stretches without a completed operation (result.VUQuiet); one is
// a VU stall when it lasted StallMinSec or more and the step's other VUs each completed,
// on average, StallMinOps or more in it (the rule `stalled` applies to the whole step, here
// to one VU beside its peers: a VU of a fixed-rate step waiting for its turn, or of TPC-C
// thinking, is no stall).

// VVUStalled is the verdict of a step one of whose VUs made no progress while the others did.
const VVUStalled = "vu-stalled"

// VUStall is one VU's stretch without a completed operation while the step's others went on.
type VUStall struct {
	// VU is the VU's index in its step (0-based) and VUs the step's VUs.
	VU  int `json:"vu"`
	VUs int `json:"vus"`
	// Repeat is the repeat of the step it happened in.
	Repeat int `json:"repeat,omitempty"`
	// From and To are seconds of the window; ToEnd is set when it lasted until the window closed.
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	ToEnd bool    `json:"to_end,omitempty"`
	// Session is set when the stalled worker is a session of a terminals run's pool (the
	// step's terminals share its sessions): it is named a session, not a VU.
	Session bool `json:"session,omitempty"`
	// Node is where the VU's session was ("" unknown); Reconnected is set when it was lost
	// and made again in the stretch.
	Node        string `json:"node,omitempty"`
	Reconnected bool   `json:"reconnected,omitempty"`
	// OthersOps is how many operations the other VUs completed in the stretch, estimated from
	// the step's per-second throughput.
	OthersOps float64 `json:"others_ops"`
}

// say tells the stall: "VU 3 of 4 (on standby1) completed no operation for 5.1 s (from 4.0 s
// to 9.1 s of the window)".
func (v VUStall) say() string {
	on := ""
	switch {
	case v.Reconnected && v.Node != "":
		on = fmt.Sprintf(" (its session lost and made again, on %s)", v.Node)
	case v.Reconnected:
		on = " (its session lost and made again)"
	case v.Node != "":
		on = fmt.Sprintf(" (on %s)", v.Node)
	}
	span := fmt.Sprintf("from %.1f s to %.1f s of the window", v.From, v.To)
	if v.ToEnd {
		span = fmt.Sprintf("from %.1f s of the window to its end", v.From)
	}
	return fmt.Sprintf("%s %d of %d%s completed no operation for %.1f s (%s)", v.unit(), v.VU+1, v.VUs, on, v.Sec(), span)
}

// unit is what the stalled worker is: a VU, or a session of a terminals run's pool.
func (v VUStall) unit() string {
	if v.Session {
		return "session"
	}
	return "VU"
}

// Sec is the stretch's length in seconds.
func (v VUStall) Sec() float64 { return v.To - v.From }

// VUStalls finds, over a step's repeats, the stretches in which one VU completed no
// operation for StallMinSec or more while the other VUs each completed StallMinOps or more
// on average, longest first. watched is false when no repeat's VUs were watched one by one
// (a result of an older agbench).
func VUStalls(reps ...result.Step) (stalls []VUStall, watched bool) {
	for _, st := range reps {
		if st.VUQuietMinSeconds <= 0 {
			continue
		}
		watched = true
		ts, ok := st.Throughput["*"]
		vus := st.Concurrency()
		if vus < 2 || !ok || len(ts.T) != len(ts.V) {
			continue
		}
		// A terminals run's workers are its pool's sessions (result.Step.Concurrency).
		pool := st.VUs == 0
		off := ts.Start.Sub(st.Window.Start).Seconds()
		for _, q := range st.VUQuiet {
			if q.To-q.From < StallMinSec {
				continue
			}
			others := opsBetween(ts, q.From-off, q.To-off)
			if others/float64(vus-1) < StallMinOps {
				continue
			}
			stalls = append(stalls, VUStall{VU: q.VU, VUs: vus, Repeat: st.Repeat, From: q.From, To: q.To, ToEnd: q.ToEnd,
				Session: pool, Node: q.Node, Reconnected: q.Reconnected, OthersOps: others})
		}
	}
	for i := 1; i < len(stalls); i++ { // longest first, stable
		for j := i; j > 0 && stalls[j].Sec() > stalls[j-1].Sec(); j-- {
			stalls[j], stalls[j-1] = stalls[j-1], stalls[j]
		}
	}
	return stalls, watched
}

// opsBetween estimates the operations a per-second throughput series counts between a and
// b (seconds of the series): each point's rate over its interval, taken as even.
func opsBetween(ts result.TimeSeries, a, b float64) float64 {
	var n, prev float64
	for i, t := range ts.T {
		lo, hi := max(prev, a), min(t, b)
		if hi > lo {
			n += ts.V[i] * (hi - lo)
		}
		prev = t
	}
	return n
}

// vuStalled judges the steps' VU stalls: the longest of the first step (by load) that had
// one, and how many more there were. Steps whose VUs were not watched one by one (results
// of an older agbench, Step.VUsWatched false) have none; no line says so, as the command's
// recorded output of such a result, rendered again, must stay what it was.
func vuStalled(st []Step, loadName string) *Verdict {
	var worst []Step
	for _, s := range st {
		if len(s.VUStalls) > 0 {
			worst = append(worst, s)
		}
	}
	if len(worst) == 0 {
		return nil
	}
	s := worst[0]
	v := s.VUStalls[0]
	msg := fmt.Sprintf("at %s %s", count(s.Load, loadName), v.say())
	others := "the other " + v.unit()
	if v.VUs > 2 {
		others = fmt.Sprintf("the other %d %ss", v.VUs-1, v.unit())
	}
	msg += fmt.Sprintf(" while %s completed about %s", others, num(v.OthersOps))
	if v.VUs > 2 {
		msg += fmt.Sprintf(" (%s each)", num(v.OthersOps/float64(v.VUs-1)))
	}
	const listed = 3 // more stretches of the same step named in the message
	rest := s.VUStalls[1:]
	for i, x := range rest[:min(len(rest), listed)] {
		sep := ", "
		if i == 0 {
			sep = "; also "
		}
		msg += sep + x.say()
	}
	more := max(len(rest)-listed, 0)
	for _, x := range worst[1:] {
		more += len(x.VUStalls)
	}
	if more > 0 {
		msg += fmt.Sprintf(", and %d more such stretch(es)", more)
	}
	return &Verdict{Code: VVUStalled, Message: msg + ": the step's figures average over a session that made no progress (a lock it waited for, a node only it used frozen or cut off)"}
}
