package sample

import "github.com/agbench/agbench/internal/proc"

// NetRates are one interface's rates over an interval.
type NetRates struct {
	Iface     string  `json:"iface"`
	RxMBps    float64 `json:"rx_mbps"`
	TxMBps    float64 `json:"tx_mbps"`
	RxPackets float64 `json:"rx_pps"`
	TxPackets float64 `json:"tx_pps"`
}

// NetDelta turns two readings, seconds apart, into rates.
func NetDelta(iface string, prev, cur proc.NetCounters, seconds float64) NetRates {
	r := NetRates{Iface: iface}
	if seconds <= 0 {
		return r
	}
	r.RxMBps = float64(sub(cur.RxBytes, prev.RxBytes)) / seconds / 1e6
	r.TxMBps = float64(sub(cur.TxBytes, prev.TxBytes)) / seconds / 1e6
	r.RxPackets = float64(sub(cur.RxPackets, prev.RxPackets)) / seconds
	r.TxPackets = float64(sub(cur.TxPackets, prev.TxPackets)) / seconds
	return r
}
