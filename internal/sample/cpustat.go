package sample

import "github.com/agbench/agbench/internal/proc"

// CPUShares are shares (0..1) of all CPU time of the machine over an interval.
type CPUShares struct {
	User   float64 `json:"user"` // user and nice
	System float64 `json:"system"`
	IOWait float64 `json:"iowait"`
	IRQ    float64 `json:"irq"` // hard and soft interrupts
	Steal  float64 `json:"steal"`
	Idle   float64 `json:"idle"`
}

// Busy is the share not idle, not waiting for IO and not stolen.
func (s CPUShares) Busy() float64 { return s.User + s.System + s.IRQ }

// CPUDelta turns two readings into shares of the interval's CPU time.
func CPUDelta(prev, cur proc.CPUTicks) CPUShares {
	total := float64(sub(cur.Total(), prev.Total()))
	if total == 0 {
		return CPUShares{}
	}
	d := func(a, b uint64) float64 { return float64(sub(a, b)) / total }
	return CPUShares{
		User:   d(cur.User+cur.Nice, prev.User+prev.Nice),
		System: d(cur.System, prev.System),
		IOWait: d(cur.IOWait, prev.IOWait),
		IRQ:    d(cur.IRQ+cur.SoftIRQ, prev.IRQ+prev.SoftIRQ),
		Steal:  d(cur.Steal, prev.Steal),
		Idle:   d(cur.Idle, prev.Idle),
	}
}
