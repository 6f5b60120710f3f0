package diskio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a byte count such as 4096, 8K, 128KiB, 1M, 4G or 1T (binary units,
// case-insensitive, an optional B or iB after the unit).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	u := strings.ToUpper(t)
	if strings.HasSuffix(u, "IB") {
		u = strings.TrimSuffix(u, "IB")
	} else {
		u = strings.TrimSuffix(u, "B")
	}
	mult := int64(1)
	if n := len(u); n > 0 {
		switch u[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			u = u[:n-1]
		}
	}
	if u == "" || !allDigits(u) {
		return 0, fmt.Errorf("%q is not a size (a whole number with an optional unit K, M, G or T)", s)
	}
	v, err := strconv.ParseInt(u, 10, 64)
	if err != nil || v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return v * mult, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// FormatSize writes n in the largest binary unit that divides it (8K, 1M, 4G), else bytes.
func FormatSize(n int64) string {
	units := []struct {
		s string
		v int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}}
	for _, u := range units {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}
