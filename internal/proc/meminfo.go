package proc

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// Meminfo holds the figures of /proc/meminfo that say how much data memory can cache, in
// bytes. A figure the kernel does not give (MemAvailable before Linux 3.14) stays zero.
type Meminfo struct {
	TotalBytes     int64 // MemTotal
	AvailableBytes int64 // MemAvailable: what can be had without swapping (page cache included)
	CachedBytes    int64 // Cached: the page cache now
}

// Meminfo reads /proc/meminfo; MemTotal is required.
//
// Through procfs's Meminfo: it gives every figure in kB, absent ones as nil, which is all
// agbench needs.
func (f FS) Meminfo() (Meminfo, error) {
	pfs, err := procfs.NewFS(f.Proc())
	if err != nil {
		return Meminfo{}, err
	}
	m, err := pfs.Meminfo()
	if err != nil {
		return Meminfo{}, err
	}
	if m.MemTotal == nil {
		return Meminfo{}, fmt.Errorf("%s: no MemTotal", f.Proc("meminfo"))
	}
	var out Meminfo
	for _, v := range []struct {
		kB  *uint64
		dst *int64
	}{{m.MemTotal, &out.TotalBytes}, {m.MemAvailable, &out.AvailableBytes}, {m.Cached, &out.CachedBytes}} {
		if v.kB == nil {
			continue
		}
		if *v.kB > maxKB {
			return Meminfo{}, fmt.Errorf("%s: %d kB is not a size", f.Proc("meminfo"), *v.kB)
		}
		*v.dst = int64(*v.kB) * 1024
	}
	return out, nil
}

// maxKB is the largest figure Meminfo takes: 2^53 kB is 8 ZiB, far beyond any machine,
// and its bytes still fit an int64.
const maxKB = 1 << 53
