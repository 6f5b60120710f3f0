package cgroup

import (
	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/units"
)

// BudgetText is the part of a modelled host's budget that a person gives as text (cluster
// create's --host-* flags): a memory size, a CPU weight, and IO limits; "" is not given.
type BudgetText struct {
	Memory, CPUShares, ReadBPS, WriteBPS, ReadIOPS, WriteIOPS string
	// CPUSharesGiven says the weight was given rather than left at its default: a weight
	// given without a CPU budget is still checked.
	CPUSharesGiven bool
}

// Read reads t into b, whose CPUs are already set, naming every bad value's flag at once.
// The CPU weight applies only with a CPU budget.
func (t BudgetText) Read(b *Budget) error {
	var errs []error
	if t.Memory != "" {
		n, err := units.ParseBytes(t.Memory)
		if err != nil || n <= 0 {
			errs = append(errs, agerr.BadInputf("--host-memory %q: want a size such as 512M or 1G", t.Memory))
		}
		b.Memory = n
	}
	if b.CPUs > 0 || t.CPUSharesGiven {
		n, err := ParseCPUShares("--host-cpu-shares", t.CPUShares)
		errs = append(errs, err)
		b.CPUShares = n
	}
	for _, f := range []struct {
		flag, v string
		to      *int64
		parse   func(string, string) (int64, error)
	}{{"--host-read-bps", t.ReadBPS, &b.ReadBPS, ParseBPS}, {"--host-write-bps", t.WriteBPS, &b.WriteBPS, ParseBPS},
		{"--host-read-iops", t.ReadIOPS, &b.ReadIOPS, ParseIOPS}, {"--host-write-iops", t.WriteIOPS, &b.WriteIOPS, ParseIOPS}} {
		if f.v != "" {
			n, err := f.parse(f.flag, f.v)
			errs = append(errs, err)
			*f.to = n
		}
	}
	return agerr.Join(errs...)
}
