package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseLSN reads PostgreSQL's "X/Y" WAL position into a byte offset.
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	h, err := strconv.ParseUint(hi, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	l, err := strconv.ParseUint(lo, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad LSN %q", s)
	}
	return h<<32 | l, nil
}

func lsnLess(a, b string) bool { return lsnDiff(b, a) > 0 }

// lsnDiff returns a-b in bytes; unreadable LSNs count as 0/0.
func lsnDiff(a, b string) int64 {
	x, _ := ParseLSN(a)
	y, _ := ParseLSN(b)
	return int64(x) - int64(y)
}
