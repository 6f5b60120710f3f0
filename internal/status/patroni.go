package status

import (
	"encoding/json"
	"fmt"
)

// PatroniInfo records how Patroni runs the cluster: its scope (the cluster's name in etcd),
// its timing, and the etcd it elects through.
type PatroniInfo struct {
	Scope  string `json:"scope"`
	Binary string `json:"binary"`
	PatroniTiming
	Etcd EtcdInfo `json:"etcd"`
}

// PatroniTiming is Patroni's timing in seconds and whether its synchronous_mode is on: as
// agbench starts Patroni (PatroniInfo), as its GET /config reports them, and as a drill's
// result records them (result.DrillPatroni), each embedding it under the same JSON keys.
type PatroniTiming struct {
	TTL             int  `json:"ttl"`
	LoopWait        int  `json:"loop_wait"`
	RetryTimeout    int  `json:"retry_timeout"`
	SynchronousMode bool `json:"synchronous_mode"`
}

// EtcdInfo is the one-member etcd that Patroni's nodes elect their leader through.
type EtcdInfo struct {
	Binary     string `json:"binary"`
	ClientPort int    `json:"client_port"`
	PeerPort   int    `json:"peer_port"`
	DataDir    string `json:"data_dir"`
	LogFile    string `json:"log_file"`
	PID        int    `json:"pid,omitempty"`
	// Host is the address etcd listens on when it is not loopback: this machine's address on
	// the subnet of a cluster whose nodes are in network namespaces.
	Host string `json:"host,omitempty"`
}

// Addr is the host etcd listens on: Host, or loopback.
func (e *EtcdInfo) Addr() string {
	if e.Host != "" {
		return e.Host
	}
	return "127.0.0.1"
}

// String describes Patroni's settings in one line.
func (p *PatroniInfo) String() string {
	sync := "off"
	if p.SynchronousMode {
		sync = "on"
	}
	return fmt.Sprintf("Patroni (etcd on %s:%d): ttl %ds, loop_wait %ds, retry_timeout %ds, synchronous_mode %s",
		p.Etcd.Addr(), p.Etcd.ClientPort, p.TTL, p.LoopWait, p.RetryTimeout, sync)
}

// PatroniMember is one member of GET /cluster: role leader, sync_standby or replica; state
// running, streaming, starting, stopped, …; the timeline; the lag behind the leader in bytes
// (Patroni says "unknown" when it has no position: LagUnknown).
type PatroniMember struct {
	Name     string          `json:"name"`
	Role     string          `json:"role"`
	State    string          `json:"state"`
	APIURL   string          `json:"api_url"`
	Host     string          `json:"host,omitempty"`
	Port     int             `json:"port,omitempty"`
	Timeline int             `json:"timeline,omitempty"`
	RawLag   json.RawMessage `json:"lag,omitempty"`
}

// Lag is the member's lag in bytes, or nil when Patroni does not know it (or it is the leader).
func (m *PatroniMember) Lag() *int64 {
	var v int64
	if len(m.RawLag) == 0 || json.Unmarshal(m.RawLag, &v) != nil {
		return nil
	}
	return &v
}

// PatroniView is GET /cluster of one member's REST API (From).
type PatroniView struct {
	From    string          `json:"from"`
	Members []PatroniMember `json:"members"`
	Pause   bool            `json:"pause,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Leader returns the member that holds the leader key, or nil.
func (v *PatroniView) Leader() *PatroniMember {
	for i := range v.Members {
		if v.Members[i].Role == "leader" {
			return &v.Members[i]
		}
	}
	return nil
}
