package diskio

import "testing"

func TestParseSize(t *testing.T) {
	good := map[string]int64{"4096": 4096, "8K": 8192, "8k": 8192, "8KB": 8192, "8KiB": 8192, "128K": 128 << 10,
		"1M": 1 << 20, "4G": 4 << 30, "1T": 1 << 40, "512B": 512, " 2m ": 2 << 20}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "12Q", "K", "-1K", "1.5G", "B", "iB", "99999999999T", "1KK", "0x10"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512", 4096: "4K", 128 << 10: "128K", 1 << 20: "1M", 3 << 30: "3G", 1536: "1536"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("round trip of %d: %d, %v", n, back, err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4K", "12Q", "1G", "512B", "8KiB", "", "99999999999999T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}
