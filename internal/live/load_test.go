package live

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
	"github.com/agbench/agbench/internal/segment"
)

// Off a terminal, a load shows a tick at most every LoadEvery, every line about the run
// and a line per ended step, each on a line of its own.
func TestLoadLinesOffATerminal(t *testing.T) {
	var b strings.Builder
	p := NewLoad(&b, false, 2, "ops", "threads", "threads")
	tick := runner.Progress{Point: runner.Point{Index: 0, Params: map[string]string{"threads": "4"}}, Of: 2,
		Elapsed: 3 * time.Second, Measuring: true, Ops: 30, Rate: 10, TickOps: 5, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond}
	p.Event(experiment.Log{Line: "made table t with 10 rows in 0.1s"})
	p.Event(tick)
	p.Event(tick) // within LoadEvery of the first: not shown
	st := result.Step{Index: 0, Params: map[string]string{"threads": "4"}, Window: result.Window{Start: time.Unix(0, 0), End: time.Unix(2, 0)},
		Ops: map[string]*result.Op{"q": {Count: 40, Errors: 1}}}
	p.Event(experiment.StepEnded{Step: st})
	p.Clear()
	want := "made table t with 10 rows in 0.1s\n" +
		"step 1/2 threads=4 #1: measuring   3s, 30 ops, 0 errors, 10 ops/s, p50 2ms, p99 9ms\n" +
		"step 1/2 threads=4 #1: 2.00s, 40 ops, 1 errors, 20 ops/s\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// A segment's lines say its share of the step's load and which segment it is, never the
// whole run's load alone; a step of terminals says its terminals over the pool's sessions.
func TestLoadLinesSaySegmentsAndTerminals(t *testing.T) {
	win := result.Window{Start: time.Unix(0, 0), End: time.Unix(2, 0)}
	ops := map[string]*result.Op{"q": {Count: 40}}
	terms := map[string]string{result.SessionsKnob: "3", result.TerminalsKnob: "30"}
	termStep := func(n, sessions int) result.Step {
		st := result.Step{Params: terms, Window: win, Ops: ops}
		if err := st.SetExtra(result.ExtraTerminals, result.TerminalsStep{Terminals: n, Sessions: sessions, Warehouses: 3}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	seg := segment.Segment{Index: 1, Of: 3}
	rseg := &result.Segment{Index: 1, Of: 3}
	for _, c := range []struct {
		name   string
		params map[string]string
		vus    int
		seg    segment.Segment
		st     result.Step
		rseg   *result.Segment
		want   []string
	}{
		{"segment", map[string]string{"vus": "8", "routing": "on"}, 8, seg, result.Step{Params: map[string]string{"vus": "8", "routing": "on"}, VUs: 3, Window: win, Ops: ops}, rseg,
			[]string{"step 1/1 segment 1/3: 3 of 8 VUs routing=on #1: measuring", "step 1/1 segment 1/3: 3 of 8 VUs routing=on #1: 2.00s"}},
		{"terminals", terms, 3, segment.Segment{}, termStep(30, 3), nil,
			[]string{"step 1/1 30 terminals over 3 sessions #1: measuring", "step 1/1 30 terminals over 3 sessions #1: 2.00s"}},
		{"terminals segment", terms, 3, seg, termStep(10, 1), rseg,
			[]string{"step 1/1 segment 1/3: 10 of 30 terminals over 1 of 3 sessions #1: measuring", "step 1/1 segment 1/3: 10 of 30 terminals over 1 of 3 sessions #1: 2.00s"}},
	} {
		var b strings.Builder
		p := NewLoad(&b, false, 1, "tx", "vus", "VUs")
		p.Event(runner.Progress{Point: runner.Point{Params: c.params}, Spec: runner.StepSpec{VUs: c.vus}, Segment: c.seg, Of: 1, Measuring: true})
		p.Event(experiment.StepEnded{Step: c.st, Segment: c.rseg})
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], c.want[0]) || !strings.HasPrefix(lines[1], c.want[1]) {
			t.Errorf("%s: got\n%s\nwant lines beginning\n%s", c.name, b.String(), strings.Join(c.want, "\n"))
		}
	}
}
