package sample

import (
	"bytes"
	"fmt"
	"strconv"
)

// Meminfo holds the figures of /proc/meminfo that say how much data memory can cache.
type Meminfo struct {
	TotalBytes     int64 // MemTotal
	AvailableBytes int64 // MemAvailable: what can be had without swapping (page cache included)
	CachedBytes    int64 // Cached: the page cache now
}

// ParseMeminfo parses /proc/meminfo ("Key:   value kB" lines). MemTotal is required.
func ParseMeminfo(data []byte) (Meminfo, error) {
	var m Meminfo
	seen := false
	for i, line := range bytes.Split(data, []byte{'\n'}) {
		key, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			return m, fmt.Errorf("meminfo line %d: no colon", i+1)
		}
		var dst *int64
		switch string(key) {
		case "MemTotal":
			dst, seen = &m.TotalBytes, true
		case "MemAvailable":
			dst = &m.AvailableBytes
		case "Cached":
			dst = &m.CachedBytes
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 || len(f) > 2 || len(f) == 2 && string(f[1]) != "kB" {
			return m, fmt.Errorf("meminfo line %d: want \"N kB\", got %q", i+1, bytes.TrimSpace(rest))
		}
		v, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || v < 0 || v > 1<<53 {
			return m, fmt.Errorf("meminfo line %d: %q is not a size", i+1, f[0])
		}
		if len(f) == 2 {
			v *= 1024
		}
		*dst = v
	}
	if !seen {
		return m, fmt.Errorf("meminfo: no MemTotal")
	}
	return m, nil
}
