package units

import (
	"math"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"4096": 4096, "0": 0, "8K": 8192, "8k": 8192, "8KB": 8192, "8kb": 8192, "8KiB": 8192,
		"8kib": 8192, "8Ki": 8192, "128K": 128 << 10, "1M": 1 << 20, "4G": 4 << 30, "1T": 1 << 40, "512B": 512,
		" 2m ": 2 << 20, "2GIB": 2 << 30, "8388607T": 8388607 << 40}
	for in, want := range good {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
		if got, err := ParseBytesFraction(in); err != nil || got != want {
			t.Errorf("ParseBytesFraction(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":    "empty size",
		"   ": "empty size",
		"12Q": `"12Q" is not a size (a whole number with an optional unit K, M, G or T)`,
		"K":   "is not a size", "-1K": "is not a size", "+1K": "is not a size", "1.5G": "is not a size",
		"B": "is not a size", "iB": "is not a size", "8iB": "is not a size", "1KK": "is not a size",
		"0x10": "is not a size", "1e3": "is not a size", "1 K": "is not a size", "1KBB": "is not a size",
		"99999999999T":        `"99999999999T" is too large`,
		"9223372036854775808": "is too large",
	} {
		n, err := ParseBytes(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseBytes(%q) = %d, %v; want an error with %q", in, n, err, want)
		}
	}
}

func TestParseBytesFraction(t *testing.T) {
	good := map[string]int64{"2G": 2 << 30, "500M": 500 << 20, "1.5G": 3 << 29, "64k": 64 << 10, "100": 100,
		"2GiB": 2 << 30, "1gb": 1 << 30, ".5K": 512, "1.": 1, "0.1K": 102, "1.9": 1}
	for in, want := range good {
		if got, err := ParseBytesFraction(in); err != nil || got != want {
			t.Errorf("ParseBytesFraction(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1M", "fast", "1e400", "NaN", "Inf", ".", "1.2.3", "99999999999T", "8388608T"} {
		if n, err := ParseBytesFraction(in); err == nil || err.Error() != `"`+in+`" is not a size (e.g. 500M, 2G, 64k)` {
			t.Errorf("ParseBytesFraction(%q) = %d, %v", in, n, err)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"4K", "12Q", "1G", "512B", "8KiB", "", "99999999999999T", "1.5G", ".5k", "8Ki"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil {
			if n < 0 {
				t.Fatalf("ParseBytes(%q) = %d", s, n)
			}
			if back, err := ParseBytes(FormatBytesExact(n)); err != nil || back != n {
				t.Fatalf("ParseBytes(%q) = %d; read back from %q: %d, %v", s, n, FormatBytesExact(n), back, err)
			}
			if m, err := ParseBytesFraction(s); err != nil || m != n {
				t.Fatalf("ParseBytesFraction(%q) = %d, %v; ParseBytes gave %d", s, m, err, n)
			}
		}
		if m, err := ParseBytesFraction(s); err == nil && m < 0 {
			t.Fatalf("ParseBytesFraction(%q) = %d", s, m)
		}
		if r, err := ParseRate(s + "/s"); err == nil && r < 0 {
			t.Fatalf("ParseRate(%q) = %d", s+"/s", r)
		}
	})
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{"20M": 20 << 20, "1.5M/s": 3 << 19, " 512K/s ": 512 << 10, "100": 100} {
		if n, err := ParseRate(in); err != nil || n != want {
			t.Errorf("%q: %d %v", in, n, err)
		}
	}
	for _, bad := range []string{"", "/s", "fast", "1M/min", "-1M"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 3 << 30: "3.0 GiB",
		5 << 40: "5.0 TiB", 1 << 50: "1.0 PiB", 1 << 60: "1.0 EiB", math.MaxInt64: "8.0 EiB", -5: "-5 B"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormatBytesExact(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 512: "512", 4096: "4K", 128 << 10: "128K", 1 << 20: "1M", 3 << 30: "3G",
		2 << 40: "2T", 1536: "1536", 1<<40 + 1<<30: "1025G"} {
		if got := FormatBytesExact(n); got != want {
			t.Errorf("FormatBytesExact(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseBytes(FormatBytesExact(n)); err != nil || back != n {
			t.Errorf("round trip of %d: %d, %v", n, back, err)
		}
	}
}

func TestFormatBytesShort(t *testing.T) {
	for n, want := range map[int64]string{100: "100B", 0: "0B", 64 << 10: "64k", 3 << 29: "1.5G", 200 << 20: "200M",
		1<<20 + 1: "1M", 3 << 40: "3T"} {
		if got := FormatBytesShort(n); got != want {
			t.Errorf("FormatBytesShort(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMB(t *testing.T) {
	if got := MB(2_500_000); got != 2.5 {
		t.Errorf("MB = %v", got)
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{"": "", "0": "0", "123": "123", "1234": "1,234", "1234567": "1,234,567",
		"-123": "-123", "-1234": "-1,234", "+123456": "+123,456", "1234.5678": "1,234.5678", "-999999.5": "-999,999.5"} {
		if got := GroupDigits(in); got != want {
			t.Errorf("GroupDigits(%q) = %q, want %q", in, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1000000: "-1,000,000",
		math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := GroupInt(n); got != want {
			t.Errorf("GroupInt(%d) = %q, want %q", n, got, want)
		}
	}
}
