package proc

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// PressureTotals are the cumulative stall times of one /proc/pressure file, in microseconds:
// Some is time at least one task stalled on the resource, Full time all non-idle tasks did.
type PressureTotals struct {
	Some, Full uint64
	HasFull    bool
}

// Pressure reads /proc/pressure/<resource> (cpu, io or memory: PSI, Linux 4.20+), keeping
// the cumulative totals; the kernel's own averages are not needed when one takes deltas.
// The "some" line is required; a kernel before 5.13 has no "full" line for cpu.
//
// Through procfs's PSIStatsForResource: it gives each line's total in microseconds, an
// absent line as nil. A file that cannot be read (no PSI on this kernel, or turned off) is an
// error that wraps its *fs.PathError; one that does not parse is not.
func (f FS) Pressure(resource string) (PressureTotals, error) {
	pfs, err := procfs.NewFS(f.Proc())
	if err != nil {
		return PressureTotals{}, err
	}
	s, err := pfs.PSIStatsForResource(resource)
	if err != nil {
		return PressureTotals{}, err
	}
	if s.Some == nil {
		return PressureTotals{}, fmt.Errorf("%s: no \"some\" line", f.Proc("pressure", resource))
	}
	p := PressureTotals{Some: s.Some.Total}
	if s.Full != nil {
		p.Full, p.HasFull = s.Full.Total, true
	}
	return p, nil
}
