package listener

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestNewestPrimary(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name   string
		cands  []writable
		floor  uint32
		last   string
		winner string // "" for none
		rule   string // a part of the rule's words
	}{
		{"none", nil, 0, "", "", ""},
		{"one", []writable{{name: "primary", timeline: 1}}, 0, "", "primary", ""},
		// A fresh listener: the old primary restarted writable, listed first.
		{"newer timeline wins, fresh listener", []writable{{name: "primary", timeline: 1}, {name: "standby1", timeline: 2}}, 0, "", "standby1", "newest timeline (primary 1, standby1 2)"},
		{"newer timeline wins over the last primary", []writable{{name: "primary", timeline: 3}, {name: "standby1", timeline: 2, promotedAt: t0}}, 0, "standby1", "primary", "newest timeline"},
		{"unreadable timeline: promoted last", []writable{{name: "primary", timeline: 1}, {name: "standby1", promotedAt: t0}}, 0, "primary", "standby1", "left recovery most recently"},
		{"equal timelines: promoted last among them", []writable{{name: "a", timeline: 2, promotedAt: t0}, {name: "b", timeline: 2, promotedAt: t0.Add(time.Second)}, {name: "c", timeline: 1, promotedAt: t0.Add(time.Hour)}}, 0, "", "b", "timelines a 2, b 2, c 1"},
		{"equal timelines, none seen promoted: the last primary", []writable{{name: "a", timeline: 2}, {name: "b", timeline: 2}}, 0, "b", "b", "was the primary before"},
		{"cannot tell", []writable{{name: "a"}, {name: "b"}}, 0, "", "", "cannot tell which is newest (timelines not all readable: a ?, b ?)"},
		// The newest primary went down: the stale one stays stale.
		{"older timeline than the last primary", []writable{{name: "primary", timeline: 1, olderThan: "standby1"}}, 2, "standby1", "", "older than the last primary: primary is on timeline 1, the last primary was on 2"},
		{"found older before, timelines unreadable", []writable{{name: "primary", olderThan: "standby1"}}, 0, "standby1", "", "primary was found older than standby1"},
		{"found older before, since promoted again", []writable{{name: "primary", timeline: 3, olderThan: "standby1"}}, 2, "standby1", "primary", ""},
		{"equal to the last primary's timeline but found older", []writable{{name: "a", timeline: 2, olderThan: "b"}, {name: "c", timeline: 2}}, 2, "b", "c", "the others are older than the last primary: a was found older than b"},
		// A round later the loser is excluded (floor, olderThan), and a listener that saw
		// the newer node alone first has its timeline as floor: the reason stays the same.
		{"newer timeline, a round later", []writable{{name: "primary", timeline: 1, olderThan: "standby1"}, {name: "standby1", timeline: 2}}, 2, "standby1", "standby1", "newest timeline (primary 1, standby1 2)"},
		{"newer timeline, seen alone first", []writable{{name: "primary", timeline: 1}, {name: "standby1", timeline: 2}}, 2, "standby1", "standby1", "newest timeline (primary 1, standby1 2)"},
		{"promoted last, a round later", []writable{{name: "primary", timeline: 1, olderThan: "standby1"}, {name: "standby1", timeline: 1, promotedAt: t0}}, 1, "standby1", "standby1", "left recovery most recently, as this listener saw (timelines primary 1, standby1 1)"},
		{"promoted at the same instant", []writable{{name: "a", promotedAt: t0}, {name: "b", promotedAt: t0}}, 0, "", "", "cannot tell"},
	}
	for _, c := range cases {
		i, rule := newestPrimary(c.cands, c.floor, c.last)
		got := ""
		if i >= 0 {
			got = c.cands[i].name
		}
		if got != c.winner || !strings.Contains(rule, c.rule) || (c.rule == "") != (rule == "") {
			t.Errorf("%s: winner %q rule %q; want %q with %q", c.name, got, rule, c.winner, c.rule)
		}
	}
}

// A freshly started listener facing two writable nodes (the old primary restarted
// without standby.signal, listed first, and the promoted standby) sends writes to the one
// on the newer timeline, counts the conflict once, and shows one primary, for the same
// reason whichever node its first probe round saw (both, or either alone: the other's
// probe login refused) and however many rounds later it is asked; when the newest primary
// goes down it is shown down, and the stale one does not take its place.
func TestFakeFreshListenerPrefersNewerTimeline(t *testing.T) {
	for _, first := range []string{"both", "primary", "standby1"} {
		t.Run("first seen "+first, func(t *testing.T) { freshListenerPrefersNewerTimeline(t, first) })
	}
}

func freshListenerPrefersNewerTimeline(t *testing.T, first string) {
	old, promoted := startFakePG(t, "primary", false), startFakePG(t, "standby1", false)
	promoted.timeline.Store(2)
	old.refuseProbe.Store(first == "standby1")
	promoted.refuseProbe.Store(first == "primary")
	var mu sync.Mutex
	var events []Event
	l := startFake(t, Config{Routing: true, Metrics: "127.0.0.1:0", OnEvent: func(e Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}}, old, promoted)
	if st := l.Status(); st[0].Up != (first != "standby1") || st[1].Up != (first != "primary") {
		t.Fatalf("the first probe round saw %+v, want %s", st, first)
	}
	old.refuseProbe.Store(false)
	promoted.refuseProbe.Store(false)
	waitFor(t, "both nodes probed", func() bool { st := l.Status(); return st[0].Up && st[1].Up })
	if got := queryOne(t, connect(t, l.Addr().String(), ""), "SELECT node"); got != "standby1" {
		t.Fatalf("writes went to %s, want standby1 (timeline 2)", got)
	}
	// Two rounds on, the old primary is excluded as older than the last primary: the
	// reason stated must not change with it.
	seen := l.Status()
	waitFor(t, "more probe rounds", func() bool { return l.Status()[0].ProbedAt.After(seen[0].ProbedAt.Add(100 * time.Millisecond)) })
	for _, st := range [][]NodeStatus{seen, l.Status()} {
		if st[1].Role != "primary" || st[0].Role != "stale-primary" || st[1].Timeline == nil || *st[1].Timeline != 2 ||
			!strings.Contains(st[0].Conflict, "standby1 is the primary: newest timeline (primary 1, standby1 2)") ||
			!strings.Contains(st[1].Conflict, "the newest of 2 writable nodes: newest timeline (primary 1, standby1 2)") {
			t.Fatalf("status %+v", st)
		}
	}
	var status struct {
		Primary string
		Nodes   []NodeStatus
	}
	if err := json.Unmarshal([]byte(httpGet(t, "http://"+l.MetricsAddr().String()+"/status")), &status); err != nil || status.Primary != "standby1" {
		t.Fatalf("/status primary %q, %v", status.Primary, err)
	}
	if c := l.Counts().Conflicts; c["primary"] != 1 || len(c) != 1 {
		t.Fatalf("conflicts %v, want one for primary", c)
	}
	body := httpGet(t, "http://"+l.MetricsAddr().String()+"/metrics")
	for _, want := range []string{
		`agbench_listener_primary_conflicts_total{node="primary"} 1`,
		`agbench_listener_backend_primary{node="primary"} 0`,
		`agbench_listener_backend_primary{node="standby1"} 1`,
		`agbench_listener_backend_stale_primary{node="primary"} 1`,
		`agbench_listener_backend_timeline{node="standby1"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	mu.Lock()
	var conflictEvents int
	for _, e := range events {
		if e.Kind == "conflict" && e.Node == "primary" {
			conflictEvents++
		}
	}
	mu.Unlock()
	if conflictEvents != 1 {
		t.Errorf("%d conflict events, want 1: %v", conflictEvents, events)
	}

	promoted.stop()
	waitFor(t, "standby1 down", func() bool { return !l.Status()[1].Up })
	st := l.Status()
	if st[1].Role != "down" || st[0].Role != "stale-primary" || !strings.Contains(st[0].Conflict, "primary is on timeline 1, the last primary was on 2") {
		t.Fatalf("with the newest primary down: %+v", st)
	}
	_, err := tryConnect(l.Addr().String(), "")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeRejected || !strings.Contains(pe.Message, "primary: stale-primary") {
		t.Fatalf("writes with the newest primary down: %v", err)
	}
}

// When the probe login may not read the timeline, a fresh listener cannot tell two
// writable nodes apart: it says so and sends writes to neither.
func TestFakeUnreadableTimelines(t *testing.T) {
	a, b := startFakePG(t, "nodea", false), startFakePG(t, "nodeb", false)
	b.timeline.Store(2)
	a.denyTimeline.Store(true)
	b.denyTimeline.Store(true)
	l := startFake(t, Config{Routing: true}, a, b)
	st := l.Status()
	if st[0].Role != "stale-primary" || st[1].Role != "stale-primary" || st[0].Timeline != nil ||
		!strings.Contains(st[0].TimelineError, "permission denied for function pg_walfile_name (42501)") ||
		!strings.Contains(st[0].Conflict, "cannot tell which is newest (timelines not all readable: nodea ?, nodeb ?)") {
		t.Fatalf("status %+v", st)
	}
	if _, err := tryConnect(l.Addr().String(), ""); err == nil {
		t.Fatal("a write session was routed with two writable nodes and no way to tell the newest")
	}
	// Demote one: the other is the only writable node left.
	a.inRecovery.Store(true)
	waitFor(t, "nodeb primary", func() bool { return l.Status()[1].Role == "primary" })
	if got := queryOne(t, connect(t, l.Addr().String(), ""), "SELECT node"); got != "nodeb" {
		t.Fatalf("writes went to %s", got)
	}
	// After a GRANT the probe reads the timeline again, within timelineRetryProbes probes.
	b.denyTimeline.Store(false)
	waitFor(t, "nodeb's timeline", func() bool {
		st := l.Status()[1]
		return st.Timeline != nil && *st.Timeline == 2 && st.TimelineError == ""
	})
}
