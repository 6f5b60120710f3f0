package cluster

import (
	"strings"
	"testing"
)

func TestParseLSN(t *testing.T) {
	good := map[string]uint64{"0/0": 0, "0/3000148": 0x3000148, "16/B374D848": 0x16_B374D848, "FFFFFFFF/FFFFFFFF": ^uint64(0), "a/b": 0xa_0000000b}
	for s, want := range good {
		got, err := ParseLSN(s)
		if err != nil || got != want {
			t.Errorf("ParseLSN(%q) = %x, %v; want %x", s, got, err, want)
		}
	}
	for _, s := range []string{"", "/", "0/", "/1", "0x1/2", "1/2/3", "-1/2", "+1/2", "1 /2", "123456789/0", "0/123456789", "g/0", "3000148", "0/3000148 "} {
		if v, err := ParseLSN(s); err == nil {
			t.Errorf("ParseLSN(%q) = %x, want an error", s, v)
		}
	}
}

func FuzzParseLSN(f *testing.F) {
	for _, s := range []string{"0/3000148", "16/B374D848", "0/", "/0", "FFFFFFFF/FFFFFFFF", "1/2/3", "0x1/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseLSN(s)
		if err != nil {
			if !strings.Contains(err.Error(), "bad LSN") {
				t.Fatalf("error %v", err)
			}
			return
		}
		// What parses prints back as PostgreSQL prints it, and parses to the same value.
		w, err := ParseLSN(FormatLSN(v))
		if err != nil || w != v {
			t.Fatalf("%q -> %x -> %q -> %x, %v", s, v, FormatLSN(v), w, err)
		}
	})
}
