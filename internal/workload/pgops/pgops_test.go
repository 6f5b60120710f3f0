package pgops

import "testing"

func TestStepCounters(t *testing.T) {
	m := StepCounters(Counters{Hits: 100, Reads: 10}, Counters{Hits: 1100, Reads: 260}, 2)
	if m["buffer_hits"] != 1000 || m["buffer_reads"] != 250 {
		t.Fatalf("%v", m)
	}
	// 1250 blocks × 8192 bytes over 2 s.
	if got, want := m["server_mb_per_s"], 1250*8192/1e6/2; got != want {
		t.Fatalf("server_mb_per_s %v, want %v", got, want)
	}
	if _, ok := StepCounters(Counters{}, Counters{}, 0)["server_mb_per_s"]; ok {
		t.Fatal("a rate over an empty window")
	}
}
