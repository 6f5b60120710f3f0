package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// landedStudy is a routing off/on sweep whose steps name the standby "east.s1" three ways:
// by its address, by the form of its name in figure names and by its name.
func landedStudy(t *testing.T) *result.Result {
	s := rorStudy()
	s.Loads = []int{1, 2, 4}
	r := s.result(t)
	r.Meta.Topology = &result.Topology{Cluster: "c", Nodes: []result.Node{
		{Name: "primary", Role: "primary", Addr: "127.0.0.1:7731"},
		{Name: "east.s1", Role: "standby", Addr: "127.0.0.1:7732"},
	}}
	ways := []string{"127.0.0.1:7732", "east_s1", "east.s1"}
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.Variant == "routing=off" {
			st.Sessions = []result.Sessions{{Node: "127.0.0.1:7731", Count: st.VUs}}
			continue
		}
		st.Sessions = []result.Sessions{{Node: ways[st.Point], InRecovery: true, Count: st.VUs}}
		st.Series["pg.primary.standby.east_s1.replay_lag_s"] = st.Series["pg.primary.standby.standby1.replay_lag_s"]
	}
	return r
}

func TestSessionsTableOneNamePerNode(t *testing.T) {
	exps := build(t, NewRun("/r/landed/result.json", landedStudy(t)))
	tb := exps[0].SessionsTable()
	var rows []string
	for _, r := range tb.Rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, c.Text)
		}
		rows = append(rows, strings.Join(cells, "|"))
	}
	want := []string{
		"primary|primary|primary|1|2|4|0|0|0",
		"east.s1|standby|standby|0|0|0|1|2|4",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sessions table rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	page, err := HTML(exps, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("pg.primary.standby.east.s1.replay_lag_s")) {
		t.Error("the replication lag chart does not name the standby by the topology's name")
	}
	if !bytes.Contains(page, []byte(`data-name="stress-sessions"`)) {
		t.Fatal("the HTML report has no sessions-landed table")
	}
	// The address and the figure form appear only where the topology lists the node.
	for _, raw := range []string{"127.0.0.1:7732", "east_s1"} {
		if n := bytes.Count(page, []byte(raw)); n > 1 {
			t.Errorf("the HTML report names the node %q %d times; want only the topology's line", raw, n)
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, tb); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "east_s1") || strings.Contains(text.String(), "7732") {
		t.Fatalf("terminal table names the node by a raw name:\n%s", text.String())
	}
}

func TestSessionsTableFlagsWhatDiffersFromTheTopology(t *testing.T) {
	r := landedStudy(t)
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.Variant == "routing=on" && st.Point == 2 {
			// A failed-over standby that is now a primary, and read intent that landed on it.
			st.Sessions = []result.Sessions{{Node: "east.s1", InRecovery: false, Count: st.VUs}}
			st.Counters[result.ReadTxOnPrimary] = 12
		}
	}
	tb := build(t, NewRun("/r/landed/result.json", r))[0].SessionsTable()
	var notes []string
	for _, row := range tb.Rows {
		if n := row[len(row)-1].Text; n != "" {
			notes = append(notes, row[0].Text+" "+row[1].Text+": "+n)
		}
	}
	want := "east.s1 primary: ! topology says standby; ! routing=on: 12 read-intent tx on the primary at 4"
	if len(notes) != 1 || notes[0] != want {
		t.Fatalf("notes %q, want [%q]", notes, want)
	}
}

func TestNoSessionsTableWithoutSessions(t *testing.T) {
	exps := build(t, NewRun("/r/plain/result.json", rorStudy().result(t)))
	if n := len(exps[0].SessionsTable().Rows); n != 0 {
		t.Fatalf("a run that recorded no sessions has a sessions table of %d rows", n)
	}
	for _, tb := range exps[0].Tables() {
		if strings.HasSuffix(tb.Name, "-sessions") {
			t.Fatal("Tables lists an empty sessions table")
		}
	}
}

func TestSessionsTableText(t *testing.T) {
	r := landedStudy(t)
	r.Steps[len(r.Steps)-1].Counters[result.ReadTxOnPrimary] = 3
	r.Steps[len(r.Steps)-1].Sessions = append(r.Steps[len(r.Steps)-1].Sessions, result.Sessions{Node: "primary", Count: 1})
	var b bytes.Buffer
	if err := WriteText(&b, build(t, NewRun("/r/landed/result.json", r))[0].SessionsTable()); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if !strings.Contains(b.String(), "| routing=off") || !strings.Contains(b.String(), "! routing=on: 3 read-intent tx on the primary at 4") {
		t.Fatalf("sessions table:\n%s", b.String())
	}
}

func TestSessionsNotCountedAreAbsent(t *testing.T) {
	r := landedStudy(t)
	for i := range r.Steps {
		if r.Steps[i].Variant == "routing=on" && r.Steps[i].Point == 1 {
			r.Steps[i].Sessions = nil // a step that did not count its sessions
		}
	}
	tb := build(t, NewRun("/r/landed/result.json", r))[0].SessionsTable()
	got := tb.Rows[1][3+3+1].Text // east.s1, routing=on, second point
	if got != "-" {
		t.Fatalf("sessions of a step that did not count them: %q, want -", got)
	}
	if got := tb.Rows[1][3].Text; got != "0" {
		t.Fatalf("sessions counted elsewhere: %q, want 0", got)
	}
}

// A routing list that puts the primary in its first entry asks for read intent there: the
// sessions table says so once per variant, without "!".
func TestSessionsTableReadTxOnPrimaryAsTheListAsks(t *testing.T) {
	r := landedStudy(t)
	r.Meta.Topology.RoutingList = "(('east.s1','primary'))"
	for i := range r.Steps {
		if st := &r.Steps[i]; st.Variant == "routing=on" && st.Point > 0 {
			st.Sessions = append(st.Sessions, result.Sessions{Node: "primary", Count: 1})
			st.Counters[result.ReadTxOnPrimary] = 5
		}
	}
	tb := build(t, NewRun("/r/landed/result.json", r))[0].SessionsTable()
	var notes []string
	for _, row := range tb.Rows {
		if n := row[len(row)-1].Text; n != "" {
			notes = append(notes, row[0].Text+": "+n)
		}
	}
	want := "primary: routing=on: read-intent tx on the primary at threads 2, 4, as its routing list asks"
	if len(notes) != 1 || notes[0] != want {
		t.Fatalf("notes %q, want [%q]", notes, want)
	}
}
