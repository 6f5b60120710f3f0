package analyze

import (
	"strings"
	"testing"
)

func TestRateNotKept(t *testing.T) {
	steps, ev, f := goodRun()
	fixed := func(s []Step, asked float64, late int64) {
		for i := range s {
			s[i].OpenLoop, s[i].Rate = true, asked
			s[i].Ops = int64(s[i].Throughput * s[i].WindowSec)
			s[i].DoneRate = &s[i].Throughput
			s[i].LateStarts = late
		}
	}
	// The schedule kept: each step asked what it did.
	for i := range steps {
		steps[i].OpenLoop, steps[i].Rate = true, steps[i].Throughput
		steps[i].Ops = int64(steps[i].Throughput * steps[i].WindowSec)
		steps[i].DoneRate = &steps[i].Throughput
		steps[i].LateStarts = steps[i].Ops / 100
	}
	if vs := Check(steps, ev, f, "threads"); len(vs) != 0 {
		t.Errorf("kept schedule: %v", vs)
	}
	// --rate 2000 where far less was done.
	steps, ev, f = goodRun()
	fixed(steps, 1e6, 0)
	vs := Check(steps, ev, f, "threads")
	if len(vs) != 1 || vs[0].Code != VRateNotKept || !strings.Contains(vs[0].Message, "asked 1000000/s") || !strings.Contains(vs[0].Message, "5 more step(s)") {
		t.Errorf("rate far beyond capacity: %v", vs)
	}
	// The rate done, many operations a little late (a busy machine's timer): kept.
	steps, ev, f = goodRun()
	for i := range steps {
		steps[i].OpenLoop, steps[i].Rate = true, steps[i].Throughput
		steps[i].Ops = int64(steps[i].Throughput * steps[i].WindowSec)
		steps[i].DoneRate = &steps[i].Throughput
	}
	steps[2].LateStarts = steps[2].Ops / 2
	if vs := Check(steps, ev, f, "threads"); len(vs) != 0 {
		t.Errorf("late starts of a kept schedule: %v", vs)
	}
	// One step 20% short.
	steps[3].Rate = steps[3].Throughput * 1.25
	vs = Check(steps, ev, f, "threads")
	if len(vs) != 1 || vs[0].Code != VRateNotKept || !strings.Contains(vs[0].Message, "at 8 threads") || !strings.Contains(vs[0].Message, "(80%)") {
		t.Errorf("a step 20%% short: %v", vs)
	}
	// Closed-loop steps are never judged so.
	steps, ev, f = goodRun()
	steps[0].LateStarts = 1 << 20
	if vs := Check(steps, ev, f, "threads"); len(vs) != 0 {
		t.Errorf("closed loop: %v", vs)
	}
}
