package result

// The host figures' section of a step (Step.Extra["hosts"]), written by the sampler that
// reads each node's host from its Prometheus node_exporter (directly or through a
// Prometheus server) and read by internal/analyze and internal/report: where a node's
// host.<node>.* figures came from, and why those absent from the step are absent.

// HostsStep is, per node (by name, as the topology names it), how its host's figures were
// read in the step's window.
type HostsStep struct {
	Nodes map[string]HostSource `json:"nodes,omitempty"`
}

// HostSource is how one node's host figures were read in a window.
type HostSource struct {
	// Source says where they were read: the node_exporter's URL, or the Prometheus
	// server's URL with the series' instance.
	Source string `json:"source"`
	// Scrapes counts the reads of the window (at its open, at its close and each second
	// between), Failed those that failed.
	Scrapes int `json:"scrapes"`
	Failed  int `json:"failed,omitempty"`
	// Absent says why none of the host's figures was measured in the window (every read
	// failed, or the server had none of the node's series); "" when some were.
	Absent string `json:"absent,omitempty"`
	// Missing are the figures absent from the window although others were read, by their
	// name after "host.<node>." (HostCPUBusy, HostRunQueue, ...), each with why.
	Missing map[string]string `json:"missing,omitempty"`
	// Span is when the readings the window's figures are made of were taken, on agbench's
	// clock: about the window's open and close for an exporter read directly; the server's
	// scrapes nearest them for one read through a Prometheus server (the last before the
	// open, the first after the close). Nil when the window had no such two readings.
	Span *Window `json:"span,omitempty"`
	// Nodename and Machine are what the exporter's node_uname_info said of its machine at
	// the window's close (its hostname and architecture): with the boot time, what tells
	// one machine from another. Empty when it was not reported.
	Nodename string `json:"nodename,omitempty"`
	Machine  string `json:"machine,omitempty"`
}

// Hosts returns the step's host figures' section: nil when the step has none, an
// *ExtraError naming the section when it does not decode.
func (s *Step) Hosts() (*HostsStep, error) {
	return extraOf[HostsStep](s.ExtraOf, ExtraHosts)
}

// Why is why a figure of the node's host is absent from the window: the whole host's
// reason, the figure's own, or "" when neither is recorded.
func (h HostSource) Why(figure string) string {
	if h.Absent != "" {
		return h.Absent
	}
	return h.Missing[figure]
}
