package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseLSN reads a WAL position in PostgreSQL's pg_lsn text form, "16/B374D848": two
// hexadecimal numbers of 1 to 8 digits around a slash, nothing else (as pg_lsn reads it).
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if ok && hexDigits(hi) && hexDigits(lo) {
		h, _ := strconv.ParseUint(hi, 16, 32)
		l, _ := strconv.ParseUint(lo, 16, 32)
		return h<<32 | l, nil
	}
	return 0, fmt.Errorf("bad LSN %q (want two hexadecimal numbers such as 0/3000148)", s)
}

// FormatLSN writes a WAL position as PostgreSQL does.
func FormatLSN(v uint64) string { return fmt.Sprintf("%X/%X", v>>32, uint32(v)) }

func hexDigits(s string) bool {
	if len(s) == 0 || len(s) > 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func lsnLess(a, b string) bool { return lsnDiff(b, a) > 0 }

// lsnDiff returns a-b in bytes; unreadable LSNs count as 0/0.
func lsnDiff(a, b string) int64 {
	x, _ := ParseLSN(a)
	y, _ := ParseLSN(b)
	return int64(x) - int64(y)
}
