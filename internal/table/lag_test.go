package table

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/result"
)

// lagStep is a step whose sampler recorded these lag entries on primary p, with the lag
// counters given (standby → seconds).
func lagStep(t *testing.T, threads string, p string, lags []result.StandbyLag, secs map[string]float64) result.Step {
	t.Helper()
	st := result.Step{Point: len(threads), Params: map[string]string{"threads": threads}, Complete: true, Counters: map[string]float64{}}
	for s, v := range secs {
		st.Counters[result.PGStandbyName(p, s, result.PGReplayLagSeconds)] = v
	}
	if err := st.SetExtra(result.ExtraSample, result.SampleStep{Nodes: map[string]result.SampleNode{p: {Lag: lags}}}); err != nil {
		t.Fatal(err)
	}
	return st
}

// A standby's lag is a column of the steps' table where the sampler named its source: its
// replay lag at each step's end; "–" where absent (a NULL pg_stat_replication, or a primary
// whose standbys an ordinary login could not see), and the notes say the source and why.
// A result whose samplers named no source (written before they did) has no column.
func TestLagColumns(t *testing.T) {
	noPriv := "replication lag not measured on db: the login app lacks pg_read_all_stats (pg_monitor includes it)"
	r := &result.Result{Steps: []result.Step{
		lagStep(t, "1", "db", []result.StandbyLag{{Standby: "s.1", Method: result.LagFromPositions}}, map[string]float64{"s.1": 0}),
		lagStep(t, "22", "db", []result.StandbyLag{{Standby: "s.1", Method: result.LagFromPositions}}, map[string]float64{"s.1": 4.05}),
		lagStep(t, "333", "db", []result.StandbyLag{{Standby: "s.1", Method: result.LagFromStatReplication, Absent: "replay lag of s.1 not measured: NULL"}, {Absent: noPriv}}, map[string]float64{"s.1": 7}),
	}}
	var b bytes.Buffer
	if err := Write(&b, r, "threads", WithLag(r, []Column{{Header: "x", Format: "%.0f", Value: func(*result.Step) (float64, bool) { return 1, true }}})); err != nil {
		t.Fatal(err)
	}
	// (the table's writer counts bytes: "–" takes three)
	want := "  threads  x  standby lag s  s.1 lag s\n        1  1              –       0.00\n       22  1              –       4.05\n      333  1              –          –\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", b.String(), want)
	}
	notes := strings.Join(LagNotes(r), "\n")
	for _, w := range []string{"s.1 lag from " + result.LagFromPositions + ": its pg_last_wal_replay_lsn()", "s.1 lag –: replay lag of s.1 not measured: NULL", "standby lag –: " + noPriv} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	old := &result.Result{Steps: []result.Step{{Point: 1, Params: map[string]string{"threads": "1"},
		Counters: map[string]float64{result.PGStandbyName("db", "s1", result.PGReplayLagSeconds): 60}}}}
	if c := LagColumns(old); len(c) != 0 || len(LagNotes(old)) != 0 {
		t.Errorf("a result without lag sources has lag columns %d, notes %q", len(c), LagNotes(old))
	}
}
