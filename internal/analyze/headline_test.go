package analyze

import (
	"slices"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

func TestHeadlineOf(t *testing.T) {
	for _, c := range []struct {
		counters []string
		want     Headline
	}{
		{[]string{"tpm", "nopm", "iops"}, Headline{Name: "nopm", Label: "NOPM", Counter: true}},
		{[]string{result.MBps, "iops"}, Headline{Name: "iops", Label: "IOPS", Counter: true}},
		{[]string{result.MBps, result.ServerMBps}, Headline{Name: result.MBps, Label: "MB/s", Counter: true}},
		// The servers' MB/s counts every session's buffer accesses: no headline.
		{[]string{result.ServerMBps}, Headline{Name: HeadlineOps, Label: "ops/s"}},
		{[]string{"tpm"}, Headline{Name: HeadlineOps, Label: "ops/s"}},
		{nil, Headline{Name: HeadlineOps, Label: "ops/s"}},
	} {
		if got := HeadlineOf(func(n string) bool { return slices.Contains(c.counters, n) }); got != c.want {
			t.Errorf("HeadlineOf(%v) = %+v; want %+v", c.counters, got, c.want)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := result.Step{Window: result.Window{Start: t0, End: t0.Add(2 * time.Second)}, Ops: map[string]*result.Op{"q": {Count: 10, Bytes: 4e6}},
		Counters: map[string]float64{"iops": 7}}
	if v, ok := (Headline{Name: "iops", Counter: true}).Of(&st); !ok || v != 7 {
		t.Errorf("iops of the step: %v %v", v, ok)
	}
	if _, ok := (Headline{Name: "nopm", Counter: true}).Of(&st); ok {
		t.Error("a counter the step lacks is measured")
	}
	if v, _ := (Headline{Name: HeadlineOps}).Of(&st); v != 5 {
		t.Errorf("ops/s of the step: %v, want 5", v)
	}
	if h := HeadlineOfSteps([]result.Step{{}, st}); h.Name != "iops" {
		t.Errorf("HeadlineOfSteps: %+v", h)
	}
	st.Counters = map[string]float64{result.ServerMBps: 8}
	if h := HeadlineOfSteps([]result.Step{st}); h.Name != HeadlineOps {
		t.Errorf("HeadlineOfSteps of a step with the servers' MB/s and bytes moved: %+v", h)
	}
}
