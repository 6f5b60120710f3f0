package tpcc

import (
	"fmt"
	"math"

	"github.com/agbench/agbench/internal/result"
)

// SegmentStep is what the cross-check of a merged run knows of one segment's step.
type SegmentStep struct {
	Index int
	// NOPM is the segment's client NOPM: its committed New-Orders over its own window.
	NOPM   float64
	Window result.Window
	// Sessions are the sessions its New-Orders ran on (its VUs, or its monitor's pool).
	Sessions int
}

// MergedDisagreements compares a merged step's summed client counts (c, the segments' sums)
// with the server's, which the first segment of segs, the lowest, read over its own window
// for the whole run: TPM as Disagreements does, NOPM by what the segments can know to differ.
//
// The districts' next order ids moved by the New-Orders every segment committed while the
// first segment's window was open (a New-Order its unused item rolls back moves none, nor
// does the client count it), and each segment's client counted those it began and ended in
// its own window. The two counts of New-Orders, over the first segment's window, differ by
//   - those in flight at a window's edge: begun before it opened and committed in it, or
//     begun in it and committed after it closed (the runner begins none once it closed),
//     at most one per session per edge;
//   - those a segment committed while its window and the first one's differed (they began
//     and ended apart by seconds), at its own rate.
//
// Beyond their sum the counts disagree, and the warning says the counts it allowed. (The
// server's count begins as the first segment's tpcc sampler starts, before its other
// samplers and its window: a step with a ramp-up also runs New-Orders meanwhile, which no
// client counts and which this does not allow for; the samplers' start is not recorded.)
func MergedDisagreements(c map[string]float64, windowSec float64, segs []SegmentStep) []string {
	out := tpmDisagreement(c, windowSec)
	nopm, nok := c[CounterNOPM]
	srv, sok := c[CounterServerNOPM]
	if !nok || !sok || len(segs) == 0 {
		return out
	}
	if w := mergedNOPM(nopm, srv, segs); w != "" {
		out = append([]string{w}, out...)
	}
	return out
}

// mergedNOPM is the NOPM warning of MergedDisagreements, or "" when the counts agree.
func mergedNOPM(client, server float64, segs []SegmentStep) string {
	first := segs[0]
	minutes := first.Window.Seconds() / 60
	if minutes <= 0 {
		return ""
	}
	edges := 0
	var skewed, skew float64 // New-Orders run while windows differed, and the most seconds they did
	for _, s := range segs {
		edges += 2 * s.Sessions
		d := math.Abs(s.Window.Start.Sub(first.Window.Start).Seconds()) + math.Abs(s.Window.End.Sub(first.Window.End).Seconds())
		skewed += s.NOPM * d / 60
		skew = max(skew, d)
	}
	apart := math.Abs(client-server) * minutes
	if allowed := float64(edges) + skewed; apart <= allowed {
		return ""
	}
	return fmt.Sprintf("%s: %.0f New-Orders over segment %d's %.1f s window, where the segments' counts can differ by %d in flight at the windows' edges (one per session per edge) and %.0f committed while their windows differed from it (up to %.1f s)",
		nopmApart(client, server), apart, first.Index, first.Window.Seconds(), edges, skewed, skew)
}
