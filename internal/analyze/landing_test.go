package analyze

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// stress --listener … --intent read-only: where each step's sessions landed judges the run.
func TestReadIntentSessionsJudged(t *testing.T) {
	sweep := mmcSweep([]int{1, 2}, 2, 1000, 0)
	run := func(intent string, topo *result.Topology, onStandby bool) []Verdict {
		steps := resultOf(t, sweep, "", func(Step) map[string]float64 { return nil })
		for i := range steps {
			node := "p1"
			if onStandby {
				node = "s1"
			}
			steps[i].Sessions = []result.Sessions{{Node: node, InRecovery: onStandby, Count: steps[i].VUs}}
		}
		r := &result.Result{Meta: result.Meta{Config: map[string]any{"intent": intent}, Topology: topo}, Steps: steps}
		return Fired(mustFromResult(t, r, Options{}).Variants[0].Result.Verdicts) // the verdicts that fired
	}
	listener := &result.Topology{Listener: "127.0.0.1:6432"}
	vs := run("read-only", listener, false)
	if len(vs) != 1 || vs[0].Code != VReadIntent || !strings.Contains(vs[0].Message, "3 of 3 read-intent sessions ran on the primary (p1)") {
		t.Errorf("read intent through a listener that fell back to the primary: %v", vs)
	}
	if vs := run("read-only", listener, true); len(vs) != 0 {
		t.Errorf("read intent on the standby: %v", vs)
	}
	if vs := run("read-write", listener, false); len(vs) != 0 {
		t.Errorf("read-write intent on the primary: %v", vs)
	}
	standby := &result.Topology{Nodes: []result.Node{{Name: "p1", Role: "primary"}, {Name: "s1", Role: "standby"}}}
	if vs := run("read-only", standby, false); len(vs) != 1 || vs[0].Code != VReadIntent {
		t.Errorf("read intent with a standby given, landed on the primary: %v", vs)
	}
	primaryOnly := &result.Topology{Nodes: []result.Node{{Name: "p1", Role: "primary"}}}
	if vs := run("read-only", primaryOnly, false); len(vs) != 0 {
		t.Errorf("read intent with no standby to reach: %v", vs)
	}
}

// A routing comparison: routing=on's sessions belong on a standby, routing=off's on the
// primary, whatever the run's own intent.
func TestReadIntentRoutingVariants(t *testing.T) {
	sweep := mmcSweep([]int{4}, 4, 1000, 0)
	var steps []result.Step
	for _, v := range []string{"off", "on"} {
		for _, st := range resultOf(t, sweep, "routing="+v, func(Step) map[string]float64 { return nil }) {
			st.Params = map[string]string{"routing": v}
			st.Sessions = []result.Sessions{{Node: "p1", Count: 3}, {Node: "s1", InRecovery: true, Count: 1}}
			steps = append(steps, st)
		}
	}
	r := &result.Result{Meta: result.Meta{Config: map[string]any{}}, Steps: steps}
	if vs := Fired(mustFromResult(t, r, Options{}).Variants[1].Result.Verdicts); len(vs) != 0 {
		t.Errorf("a command that does not record its sessions' intent (tpcc's sessions are not all read intent): %v", vs)
	}
	r.Meta.Config["intent"] = "read-write"
	run := mustFromResult(t, r, Options{})
	if vs := Fired(run.Variants[0].Result.Verdicts); len(vs) != 0 {
		t.Errorf("routing=off: %v", vs)
	}
	vs := Fired(run.Variants[1].Result.Verdicts)
	if len(vs) != 1 || vs[0].Code != VReadIntent || !strings.Contains(vs[0].Message, "3 of 4 read-intent sessions") {
		t.Errorf("routing=on with 3 of 4 sessions on the primary: %v", vs)
	}
}

// A routing=on variant is judged against the routing list its listener routed by: a
// primary in the list's first entry ((('standby1','primary')) spreads read intent over
// both on purpose) takes read intent by design; a primary listed after a standby, or the
// default list's fallback, took it only because the standbys before it could not.
func TestReadIntentJudgedAgainstTheRoutingList(t *testing.T) {
	sweep := mmcSweep([]int{4}, 4, 1000, 0)
	nodes := []result.Node{{Name: "primary", Role: "primary"}, {Name: "standby1", Role: "standby"}}
	run := func(list string, tpcc bool) []Verdict {
		var steps []result.Step
		for _, st := range resultOf(t, sweep, "routing=on", func(Step) map[string]float64 { return nil }) {
			st.Params = map[string]string{"routing": "on"}
			st.Sessions = []result.Sessions{{Node: "primary", Count: 2}, {Node: "standby1", InRecovery: true, Count: 2}}
			st.Counters = map[string]float64{result.ReadTxOnPrimary: 50, result.ReadTxOnStandby: 50}
			steps = append(steps, st)
		}
		cfg := map[string]any{"intent": "read-write"}
		if tpcc {
			cfg = map[string]any{"read_intent": true}
		}
		r := &result.Result{Meta: result.Meta{Config: cfg, Topology: &result.Topology{Nodes: nodes, RoutingList: list}}, Steps: steps}
		return Fired(mustFromResult(t, r, Options{}).Variants[0].Result.Verdicts)
	}
	for _, tpcc := range []bool{false, true} {
		if vs := run("(('standby1','primary'))", tpcc); len(vs) != 0 {
			t.Errorf("tpcc %v: the list's first entry holds the primary, yet: %v", tpcc, vs)
		}
		vs := run("('standby1','primary')", tpcc)
		if len(vs) != 1 || vs[0].Code != VReadIntent || !strings.Contains(vs[0].Message, "routing list ('standby1','primary') does not ask for the primary first") {
			t.Errorf("tpcc %v: the primary only as the fallback: %v", tpcc, vs)
		}
		vs = run("", tpcc)
		if len(vs) != 1 || !strings.Contains(vs[0].Message, "the default routing list (every standby, then the primary)") {
			t.Errorf("tpcc %v: the default list: %v", tpcc, vs)
		}
	}
}
