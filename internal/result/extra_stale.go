package result

// The stale-read probe's sections of a step (Step.Extra["stale_reads"] in eventual mode,
// ["stale_reads_causal"] in causal mode), written by internal/experiment's probe and read
// by the commands' tables and the report.

// Stale-read probe modes (StaleStep.Mode).
const (
	// StaleEventual: each read session opens as the load's read-intent sessions do,
	// before the write, and reads at once after the commit.
	StaleEventual = "eventual"
	// StaleCausal: each read session opens after the commit and names the write's WAL
	// position (agbench.min_lsn), so a listener routes it to a node that has replayed it.
	StaleCausal = "causal"
	// StaleBoth runs the two probes side by side in the same window (a command's mode;
	// each section says its own).
	StaleBoth = "both"
	// StaleOwnWrites: not a probe beside the load but the load's own reads, tpcc's
	// Order-Status on the read-intent session after the same VU's Payment of that customer,
	// stale when it saw fewer payments (c_payment_cnt) than the Payment left. It has no
	// visibility time or session start (the read is not repeated, the session is the VU's).
	StaleOwnWrites = "own-writes"
)

// StaleKey is the Extra key of a probe mode's section.
func StaleKey(mode string) string {
	switch mode {
	case StaleCausal:
		return ExtraStaleCausal
	case StaleOwnWrites:
		return ExtraStaleOwn
	}
	return ExtraStale
}

// StaleStep is what the stale-read probe measured beside a step: a writer commits a row
// on the primary, a read-intent session reads it at once; a read that misses it is stale
// and the session reads again until it sees the row.
type StaleStep struct {
	Mode string `json:"mode"`
	// Nodes are the figures by the node the read session landed on.
	Nodes map[string]StaleNode `json:"nodes,omitempty"`
	// Errors counts probes that failed (write, session, read); ErrorSample is the first
	// error's message. A failed probe is in no figure.
	Errors      int64  `json:"errors,omitempty"`
	ErrorSample string `json:"error_sample,omitempty"`
}

// StaleNode is the probe's figures for the reads that landed on one node.
type StaleNode struct {
	// Reads counts probes whose read ran, Stale those whose first read missed the write.
	Reads int64 `json:"reads"`
	Stale int64 `json:"stale"`
	// Unseen counts stale probes whose row was still not visible when the probe gave up
	// (after StaleGiveUp); they are in Stale and not in Visible.
	Unseen int64 `json:"unseen,omitempty"`
	// Visible is the time from the commit's acknowledgement until the first read that saw
	// the row was sent, 0 when the first read saw it (microseconds).
	Visible Hist `json:"visible"`
	// Session is how long opening the read session took (in causal mode the listener's
	// wait for a standby to replay the write is part of it).
	Session Hist `json:"session"`
}

// StaleShare is the share of reads that missed the write, and false without reads.
func (n StaleNode) StaleShare() (float64, bool) {
	if n.Reads == 0 {
		return 0, false
	}
	return float64(n.Stale) / float64(n.Reads), true
}

// All merges the figures of every node.
func (s *StaleStep) All() (StaleNode, error) {
	var all StaleNode
	var vis, ses []Hist
	for _, n := range s.Nodes {
		all.Reads += n.Reads
		all.Stale += n.Stale
		all.Unseen += n.Unseen
		vis = append(vis, n.Visible)
		ses = append(ses, n.Session)
	}
	var err error
	if all.Visible, err = MergeHists(vis...); err != nil {
		return all, err
	}
	all.Session, err = MergeHists(ses...)
	return all, err
}

// StaleProbe returns the step's stale-read probe section of a mode (StaleEventual or
// StaleCausal): nil when the step has none, an *ExtraError naming the section when it does
// not decode.
func (s *Step) StaleProbe(mode string) (*StaleStep, error) {
	return extraOf[StaleStep](s.ExtraOf, StaleKey(mode))
}

// StaleProbes returns the step's stale-read sections: eventual, causal, then own-writes.
func (s *Step) StaleProbes() ([]*StaleStep, error) {
	var out []*StaleStep
	for _, m := range []string{StaleEventual, StaleCausal, StaleOwnWrites} {
		p, err := s.StaleProbe(m)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}
