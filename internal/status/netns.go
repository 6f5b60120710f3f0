package status

import "fmt"

// NetnsInfo records a cluster whose nodes are hosts of their own on this machine: each in a
// network namespace of its own with an address on Subnet, joined by a veth pair to Bridge in
// the root namespace, whose address on the subnet is Gateway (where agbench, the listener
// and the links reach the nodes from). Absent: the nodes listen on loopback.
type NetnsInfo struct {
	Subnet  string `json:"subnet"`
	Gateway string `json:"gateway"`
	Bridge  string `json:"bridge"`
}

// String describes the namespaces in one line.
func (n *NetnsInfo) String() string {
	if n == nil {
		return "the nodes share this machine's network (loopback)"
	}
	return fmt.Sprintf("a network namespace per node on %s (bridge %s, this machine %s; no route out)", n.Subnet, n.Bridge, n.Gateway)
}

// NodeNetns is a node's network namespace and the root end of its veth pair.
type NodeNetns struct {
	Namespace string `json:"namespace"`
	Veth      string `json:"veth"`
}

// Exporter is a Prometheus node_exporter that agbench runs on a node's host: where it
// listens, its process (0: not started) and its log.
type Exporter struct {
	Listen  string `json:"listen"`
	PID     int    `json:"pid,omitempty"`
	LogFile string `json:"log_file,omitempty"`
}

// URL is the exporter's metrics page.
func (e *Exporter) URL() string { return "http://" + e.Listen + "/metrics" }

// NodeHost is a node's own host as `cluster status` shows it: its namespace, and its
// exporter with whether its process runs.
type NodeHost struct {
	Namespace       string `json:"namespace"`
	Exporter        string `json:"exporter,omitempty"` // its metrics URL
	ExporterPID     int    `json:"exporter_pid,omitempty"`
	ExporterRunning bool   `json:"exporter_running"`
}
