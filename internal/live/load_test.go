package live

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
)

// Off a terminal, a load shows a tick at most every LoadEvery, every line about the run
// and a line per ended step, each on a line of its own.
func TestLoadLinesOffATerminal(t *testing.T) {
	var b strings.Builder
	p := NewLoad(&b, false, 2, "ops")
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
