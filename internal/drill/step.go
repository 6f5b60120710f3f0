package drill

import (
	"errors"
	"strconv"
	"time"

	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/runner"
)

// ticks ticks the load's registry every d until the returned function, called with the
// load's end, makes the last tick.
func (l *load) ticks(d time.Duration) func(end time.Time) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				l.reg.Tick(now)
			}
		}
	}()
	return func(end time.Time) {
		close(done)
		<-stopped
		l.reg.Freeze(end)
	}
}

// step is the cycle as a step of the result: the load's operations, throughput and errors
// by SQLSTATE over the cycle's window.
func (l *load) step(n int, o Options, start, end time.Time) *result.Step {
	st := &result.Step{Index: n - 1, Point: n - 1, VUs: o.Writers + o.Readers,
		Params:   map[string]string{"cycle": strconv.Itoa(n), "fault": o.Fault},
		Window:   result.Window{Start: start, End: end},
		Complete: true}
	ops, err := l.reg.Ops()
	if err != nil {
		st.Warnings = append(st.Warnings, "latencies not kept: "+err.Error())
	}
	st.Ops = ops
	st.Throughput = l.reg.Throughput()
	st.ErrorThroughput = l.reg.ErrorThroughput()
	l.tally.mu.Lock()
	st.Errors = errorClasses(l.tally.errors)
	l.tally.mu.Unlock()
	return st
}

// errorClasses groups errors by SQLSTATE, most frequent first.
func errorClasses(errs []result.DrillError) []result.ErrorClass {
	by := runner.ErrorClasses{}
	for _, e := range errs {
		by.Note(e.SQLState, errors.New(e.Message), e.At)
	}
	return by.List()
}
