package sample

import "github.com/agbench/agbench/internal/proc"

// SetBusy is how busy the CPUs the load generator may run on (its affinity) were over an
// interval, against the machine's other CPUs: kept only when the affinity leaves some out.
type SetBusy struct {
	Set   float64 `json:"set"`   // busy share of the affinity's CPUs (0..1)
	Other float64 `json:"other"` // busy share of the other CPUs (0..1)
}

// setBusy sums two readings' per-CPU ticks over the set and over the others.
func setBusy(prev, cur map[int]proc.CPUTicks, set []int) (SetBusy, bool) {
	in := map[int]bool{}
	for _, c := range set {
		in[c] = true
	}
	var a, b [2]proc.CPUTicks // [0] in the set, [1] the others
	var n [2]int
	for cpu, t := range cur {
		p, ok := prev[cpu]
		if !ok {
			continue
		}
		i := 1
		if in[cpu] {
			i = 0
		}
		n[i]++
		a[i], b[i] = a[i].Add(p), b[i].Add(t)
	}
	if n[0] == 0 || n[1] == 0 {
		return SetBusy{}, false
	}
	return SetBusy{Set: CPUDelta(a[0], b[0]).Busy(), Other: CPUDelta(a[1], b[1]).Busy()}, true
}
