package analyze

import (
	"errors"
	"io"

	"github.com/agbench/agbench/internal/result"

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

// FuzzFromResult feeds decoded result files (outside bytes) to FromResult and WriteText:
// whatever a file holds (null ops, series of mismatched lengths, absurd numbers), the
// analysis must not panic, and fails only on a section it cannot read, naming it.
func FuzzFromResult(f *testing.F) {
	for _, s := range []string{
		`{"schema":1,"meta":{"command":"seed"},"steps":[{"vus":2,"ops":{"x":null},"window":{"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:05Z"}}]}`,
		`{"schema":1,"steps":[{"vus":1,"variant":"a","ops":{"q":null,"r":{"count":3}},"window":{"end":"2026-01-01T00:00:01Z"}},{"vus":1,"variant":"b","ops":null,"throughput":{"*":{"t":[0,1],"v":[1]}}}]}`,
		`{"schema":1,"steps":[{"vus":3,"series":{"os.cpu.busy":{"t":[0,1],"v":[50]},"disk.sda.util":{"t":[0],"v":[1e308,2]}},"extra":{"sample":null}}]}`,
		`{"schema":1,"meta":{"command":"disk","config":{"workload":null}},"extra":{"disk":null},"steps":[{"vus":1,"counters":{"device_iops":5}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := result.Decode(b)
		if err != nil {
			return
		}
		run, err := FromResult(r, Options{})
		if err != nil {
			var xe *result.ExtraError
			if !errors.As(err, &xe) {
				t.Fatalf("an error that names no section: %v", err)
			}
			return
		}
		_ = run.WriteText(io.Discard)
	})
}
