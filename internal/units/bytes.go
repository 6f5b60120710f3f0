package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary units: K = 1024 bytes.
const (
	KiB int64 = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
)

var errSyntax = errors.New("syntax")
var errRange = errors.New("range")

// ParseBytes reads a byte count written as a whole number with an optional binary unit:
// 4096, 8K, 128KiB, 1M, 4G, 1T. The unit is K, M, G or T (case-insensitive), optionally
// followed by B or iB; a lone B means bytes. Spaces around the whole are ignored.
func ParseBytes(s string) (int64, error) {
	n, err := parseBytes(s, false)
	switch {
	case err == nil:
		return n, nil
	case strings.TrimSpace(s) == "":
		return 0, fmt.Errorf("empty size")
	case errors.Is(err, errRange):
		return 0, fmt.Errorf("%q is too large", s)
	}
	return 0, fmt.Errorf("%q is not a size (a whole number with an optional unit K, M, G or T)", s)
}

// ParseBytesFraction is ParseBytes that also takes a decimal fraction before the unit
// (1.5G, 0.5M), rounded down to whole bytes.
func ParseBytesFraction(s string) (int64, error) {
	n, err := parseBytes(s, true)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (e.g. 500M, 2G, 64k)", s)
	}
	return n, nil
}

// ParseRate reads bytes per second: a size as ParseBytesFraction reads it, with an optional
// "/s" (20M, 1.5M/s, 512K).
func ParseRate(s string) (int64, error) {
	n, err := ParseBytesFraction(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil {
		return 0, fmt.Errorf("%q is not a rate (bytes per second, e.g. 20M or 512K/s)", s)
	}
	return n, nil
}

// parseBytes is the one grammar of a byte size: digits [. digits] [K|M|G|T] [B|iB].
func parseBytes(s string, fraction bool) (int64, error) {
	body := strings.ToUpper(strings.TrimSpace(s))
	switch n := len(body); {
	case strings.HasSuffix(body, "IB") && hasUnit(body[:n-2]):
		body = body[:n-2]
	case strings.HasSuffix(body, "I") && hasUnit(body[:n-1]):
		body = body[:n-1]
	case strings.HasSuffix(body, "B"):
		body = body[:n-1]
	}
	mult := int64(1)
	if hasUnit(body) {
		mult = unitOf(body[len(body)-1])
		body = body[:len(body)-1]
	}
	whole, frac, dot := strings.Cut(body, ".")
	if !allDigits(whole) || !allDigits(frac) || whole+frac == "" || dot && !fraction {
		return 0, errSyntax
	}
	n := int64(0)
	if whole != "" {
		w, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || w > math.MaxInt64/mult {
			return 0, errRange
		}
		n = w * mult
	}
	if frac != "" {
		f, err := strconv.ParseFloat("0."+frac, 64)
		if err != nil {
			return 0, errSyntax
		}
		part := int64(f * float64(mult))
		if n > math.MaxInt64-part {
			return 0, errRange
		}
		n += part
	}
	return n, nil
}

func hasUnit(s string) bool { return s != "" && unitOf(s[len(s)-1]) != 0 }

func unitOf(c byte) int64 {
	switch c {
	case 'K':
		return KiB
	case 'M':
		return MiB
	case 'G':
		return GiB
	case 'T':
		return TiB
	}
	return 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatBytes writes n for reading with a binary prefix and one decimal: "512 B",
// "1.5 KiB", "3.0 GiB" (KiB up to EiB).
func FormatBytes(n int64) string {
	if n < KiB {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := KiB, 0
	for m := n / KiB; m >= KiB; m /= KiB {
		div *= KiB
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// FormatBytesExact writes n in the largest binary unit that divides it (8K, 1M, 4G),
// else as a plain number of bytes (1536): ParseBytes reads it back to the same n.
func FormatBytesExact(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"T", TiB}, {"G", GiB}, {"M", MiB}, {"K", KiB}} {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// FormatBytesShort writes n in the largest binary unit it reaches with at most one
// decimal and no unit space, as pg_basebackup's options are written: 1.5G, 200M, 64k,
// 512B (k in lower case).
func FormatBytesShort(n int64) string {
	f := float64(n)
	for _, u := range []struct {
		s string
		v int64
	}{{"T", TiB}, {"G", GiB}, {"M", MiB}, {"k", KiB}} {
		if f >= float64(u.v) {
			return strings.TrimSuffix(strconv.FormatFloat(f/float64(u.v), 'f', 1, 64), ".0") + u.s
		}
	}
	return fmt.Sprintf("%dB", n)
}

// MB converts a byte count to decimal megabytes (10^6 bytes), the unit of the tables'
// MB and MB/s columns.
func MB(n int64) float64 { return float64(n) / 1e6 }
