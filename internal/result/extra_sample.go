package result

// The samplers' section of a step (Step.Extra["sample"]), written by internal/sample and
// read by internal/analyze.

// SampleStep is what the samplers keep of a step beyond its series and counters: per
// PostgreSQL node (by name), what was learnt of it and its top wait events.
type SampleStep struct {
	Nodes map[string]SampleNode `json:"nodes,omitempty"`
}

// SampleNode is one node's part of a step's sampler data.
type SampleNode struct {
	Info PGNodeInfo `json:"info"`
	// TopWaits are the node's most frequent wait events over the window, most sessions first.
	TopWaits []WaitEvent `json:"top_waits,omitempty"`
	// WaitSamples is how many times pg_stat_activity was sampled in the window.
	WaitSamples int `json:"wait_samples"`
}

// PGNodeInfo is what the database sampler learnt of a node when it connected.
type PGNodeInfo struct {
	Name               string `json:"name"`
	VersionNum         int    `json:"version_num"`
	InRecovery         bool   `json:"in_recovery"`
	DataDirectory      string `json:"data_directory,omitempty"` // when the role may read it
	SharedBuffersBytes int64  `json:"shared_buffers_bytes"`
	DatabaseBytes      int64  `json:"database_bytes"` // all databases together
	HasStatIO          bool   `json:"has_stat_io"`    // pg_stat_io exists (16+)
}

// WaitEvent is one wait event's mean number of sessions over a window. Class is its wait
// class (cpu, log, data_read, other_io, lwlock, lock, client, sync_rep, other).
type WaitEvent struct {
	Type     string  `json:"type"`
	Event    string  `json:"event"`
	Class    string  `json:"class"`
	Sessions float64 `json:"sessions"`
}

// Sample returns the step's sampler section: nil when the step has none, an *ExtraError
// naming the section when it does not decode.
func (s *Step) Sample() (*SampleStep, error) {
	return extraOf[SampleStep](s.ExtraOf, ExtraSample)
}
