package status

import (
	"fmt"
	"strings"
	"time"
)

// LinksInfo records the links in front of the nodes: every client and every standby's
// replication connection reaches a node through its link (the topology's link port), a relay served by a
// background `agbench cluster links` process (PID) that adds Latency to each round trip and
// holds each direction of each connection to Bandwidth bytes per second (0: unlimited).
// Absent: clients reach the nodes directly.
type LinksInfo struct {
	Latency   Duration `json:"latency"`
	Bandwidth int64    `json:"bandwidth_bytes_per_s,omitempty"`
	PID       int      `json:"pid,omitempty"`
	LogFile   string   `json:"log_file,omitempty"`
}

// Duration is a time.Duration written as text in JSON ("500µs").
type Duration time.Duration

// MarshalText writes the duration as Go prints it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration as Go prints it.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// String describes the links in one line.
func (l *LinksInfo) String() string {
	if l == nil {
		return "clients and standbys reach the nodes directly (no added latency)"
	}
	var shape []string
	if l.Latency > 0 {
		shape = append(shape, fmt.Sprintf("%v latency per round trip", time.Duration(l.Latency)))
	}
	if l.Bandwidth > 0 {
		shape = append(shape, formatRate(l.Bandwidth)+" each way per connection")
	}
	return fmt.Sprintf("links with %s between clients and nodes and on replication connections (Toxiproxy relays)", strings.Join(shape, " and "))
}
