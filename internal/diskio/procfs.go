package diskio

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// These parsers read the kernel's own counters around each step, so the tester's view
// (from the application) can be shown next to the block layer's (Documentation/admin-guide/
// iostats.rst, Documentation/accounting/psi.rst, proc(5) for /proc/stat).
// TODO(lead): internal/sample (branch analyze) is to own these; merge when it lands.

// DiskStat is one line of /proc/diskstats: completed IOs, merges, sectors (512 bytes) and
// milliseconds, per direction, plus IOs in flight, busy time and weighted time.
type DiskStat struct {
	Major, Minor                                    uint32
	Name                                            string
	ReadIOs, ReadMerges, ReadSectors, ReadTicks     uint64
	WriteIOs, WriteMerges, WriteSectors, WriteTicks uint64
	InFlight, IOTicks, TimeInQueue                  uint64
}

// ParseDiskstats reads /proc/diskstats text; lines too short or not numeric are skipped.
func ParseDiskstats(b []byte) map[string]DiskStat {
	out := map[string]DiskStat{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 {
			continue
		}
		var v [13]uint64
		ok := true
		for i := 0; i < 13 && ok; i++ {
			idx := i
			if i >= 2 {
				idx = i + 1 // field 2 is the name
			}
			var err error
			v[i], err = strconv.ParseUint(f[idx], 10, 64)
			ok = err == nil
		}
		if !ok || v[0] > 1<<32-1 || v[1] > 1<<32-1 {
			continue
		}
		out[f[2]] = DiskStat{Major: uint32(v[0]), Minor: uint32(v[1]), Name: f[2],
			ReadIOs: v[2], ReadMerges: v[3], ReadSectors: v[4], ReadTicks: v[5],
			WriteIOs: v[6], WriteMerges: v[7], WriteSectors: v[8], WriteTicks: v[9],
			InFlight: v[10], IOTicks: v[11], TimeInQueue: v[12]}
	}
	return out
}

// Pressure is one resource's /proc/pressure file: cumulative stall microseconds.
type Pressure struct {
	SomeTotal, FullTotal uint64
	HasFull              bool
}

// ParsePressure reads a /proc/pressure/* file ("some avg10=0.00 ... total=123").
func ParsePressure(b []byte) (Pressure, error) {
	var p Pressure
	seen := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var total uint64
		found := false
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return p, fmt.Errorf("pressure: bad total %q", v)
				}
				total, found = n, true
			}
		}
		if !found {
			continue
		}
		switch f[0] {
		case "some":
			p.SomeTotal, seen = total, true
		case "full":
			p.FullTotal, p.HasFull = total, true
		}
	}
	if !seen {
		return p, fmt.Errorf("pressure: no \"some\" line")
	}
	return p, nil
}

// CPUStat is the aggregate "cpu" line of /proc/stat, in clock ticks.
type CPUStat struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is the sum of all the ticks.
func (c CPUStat) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseCPUStat reads the aggregate cpu line of /proc/stat.
func ParseCPUStat(b []byte) (CPUStat, error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var v [8]uint64
		for i := 0; i < 8 && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUStat{}, fmt.Errorf("/proc/stat: bad cpu field %q", f[i+1])
			}
			v[i] = n
		}
		return CPUStat{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}, nil
	}
	return CPUStat{}, fmt.Errorf("/proc/stat: no cpu line")
}

// Device is the block device behind a file, as /proc/diskstats names it.
type Device struct {
	Name      string `json:"name"`
	Major     uint32 `json:"major"`
	Minor     uint32 `json:"minor"`
	Partition string `json:"partition,omitempty"`
}

// DeviceOf finds the whole disk behind path: its st_dev leads to /sys/dev/block/MAJ:MIN,
// and a partition leads on to its parent disk. sysRoot is "/sys" outside tests.
func DeviceOf(path, sysRoot string) (*Device, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, err
	}
	maj, mnr := unix.Major(st.Dev), unix.Minor(st.Dev)
	link := filepath.Join(sysRoot, "dev", "block", fmt.Sprintf("%d:%d", maj, mnr))
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return nil, fmt.Errorf("no block device behind %s (st_dev %d:%d): %w", path, maj, mnr, err)
	}
	d := &Device{Name: filepath.Base(real), Major: maj, Minor: mnr}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		d.Partition = d.Name
		d.Name = filepath.Base(filepath.Dir(real))
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "dev")); err == nil {
			fmt.Sscanf(strings.TrimSpace(string(b)), "%d:%d", &d.Major, &d.Minor)
		}
	}
	return d, nil
}
