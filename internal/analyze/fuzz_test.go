package analyze

import (
	"strings"
	"testing"
)

func FuzzParseSLOs(f *testing.F) {
	for _, s := range []string{"p99<5ms", "p50<500us, p99.9<=1s", "mean<0.3ms", "p99>5ms", "p99<", ",", "p99<5xs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		slos, err := ParseSLOs(text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "at ") {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		for _, s := range slos {
			if s.LimitMs <= 0 {
				t.Fatalf("%q gave a limit of %v", text, s.LimitMs)
			}
			again, err := ParseSLOs(s.String())
			if err != nil || len(again) != 1 || again[0] != s {
				t.Fatalf("%q: %+v does not round-trip through %q: %v %v", text, s, s.String(), again, err)
			}
		}
	})
}
