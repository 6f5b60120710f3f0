package cgroup

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestBudgetTextRead(t *testing.T) {
	for _, c := range []struct {
		name string
		cpus float64
		text BudgetText
		want Budget
		errs []string // every flag the error must name; none: no error
	}{
		{name: "nothing given", want: Budget{}},
		{name: "auto weight with a CPU budget", cpus: 0.5, text: BudgetText{CPUShares: "auto"},
			want: Budget{CPUs: 0.5, CPUShares: AutoCPUShares}},
		{name: "a weight without a CPU budget is not read", text: BudgetText{CPUShares: "auto"}, want: Budget{}},
		{name: "a weight given without a CPU budget is checked", text: BudgetText{CPUShares: "1", CPUSharesGiven: true},
			errs: []string{`--host-cpu-shares "1"`}},
		{name: "kernel weight", cpus: 2, text: BudgetText{CPUShares: "kernel"}, want: Budget{CPUs: 2}},
		{name: "memory and every IO limit", text: BudgetText{Memory: "1G", ReadBPS: "20M", WriteBPS: "1.5M/s", ReadIOPS: "500", WriteIOPS: "40"},
			want: Budget{Memory: 1 << 30, ReadBPS: 20 << 20, WriteBPS: 3 << 19, ReadIOPS: 500, WriteIOPS: 40}},
		{name: "every bad value at once", cpus: 1,
			text: BudgetText{Memory: "lots", CPUShares: "1", ReadBPS: "10", WriteBPS: "fast", ReadIOPS: "1.5", WriteIOPS: "3"},
			errs: []string{`--host-memory "lots"`, `--host-cpu-shares "1"`, `--host-read-bps "10"`, `--host-write-bps "fast"`,
				`--host-read-iops "1.5"`, `--host-write-iops "3"`}},
		{name: "no memory", text: BudgetText{Memory: "0"}, errs: []string{`--host-memory "0": want a size such as 512M or 1G`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := Budget{CPUs: c.cpus}
			err := c.text.Read(&b)
			if len(c.errs) == 0 {
				if err != nil || b != c.want {
					t.Fatalf("got %+v, %v; want %+v", b, err, c.want)
				}
				return
			}
			if !agerr.IsBadInput(err) {
				t.Fatalf("got %v; want bad input", err)
			}
			for _, w := range c.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q misses %q", err, w)
				}
			}
		})
	}
}
