package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// NetCounters are one interface's cumulative counters from /proc/net/dev.
type NetCounters struct {
	RxBytes, RxPackets, TxBytes, TxPackets uint64
}

// NetDev reads /proc/net/dev.
//
// By hand: procfs's NetDev (v0.8.0) indexes a line's 16 counters without counting them,
// so a short line would panic the sampler.
func (f FS) NetDev() (map[string]NetCounters, error) {
	data, err := os.ReadFile(f.Proc("net", "dev"))
	if err != nil {
		return nil, err
	}
	return ParseNetDev(data)
}

// ParseNetDev parses /proc/net/dev into counters by interface name. The two header lines
// are skipped; every other line must be "name: 16 counters".
func ParseNetDev(data []byte) (map[string]NetCounters, error) {
	out := make(map[string]NetCounters)
	for i, line := range bytes.Split(data, []byte{'\n'}) {
		name, rest, found := bytes.Cut(line, []byte{':'})
		if !found || bytes.Contains(name, []byte{'|'}) {
			if i < 2 || len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return nil, fmt.Errorf("net/dev line %d: no interface name", i+1)
		}
		f := bytes.Fields(rest)
		if len(f) < 16 {
			return nil, fmt.Errorf("net/dev line %d: %d counters, want 16", i+1, len(f))
		}
		var n [10]uint64
		for j := range n {
			v, err := strconv.ParseUint(string(f[j]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("net/dev line %d field %d: %q is not a counter", i+1, j+1, f[j])
			}
			n[j] = v
		}
		iface := string(bytes.TrimSpace(name))
		if iface == "" {
			return nil, fmt.Errorf("net/dev line %d: empty interface name", i+1)
		}
		out[iface] = NetCounters{RxBytes: n[0], RxPackets: n[1], TxBytes: n[8], TxPackets: n[9]}
	}
	return out, nil
}
