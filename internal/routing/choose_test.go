package routing

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, s string) List {
	t.Helper()
	l, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func healthy() []Node {
	return []Node{
		{Name: "primary", Up: true, Role: RolePrimary},
		{Name: "standby1", Up: true, Role: RoleStandby},
		{Name: "standby2", Up: true, Role: RoleStandby},
	}
}

func choose(t *testing.T, r *Router, intent Intent, nodes []Node) string {
	t.Helper()
	d, err := r.Choose(intent, nodes)
	if err != nil {
		t.Fatalf("Choose(%s): %v", intent, err)
	}
	return d.Node
}

func TestReadWriteGoesToPrimary(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "('standby1')")}})
	if got := choose(t, r, ReadWrite, healthy()); got != "primary" {
		t.Fatalf("read-write went to %s", got)
	}
	nodes := healthy()
	nodes[0].Up, nodes[0].Why = false, "connection refused"
	_, err := r.Choose(ReadWrite, nodes)
	var nt *NoTargetError
	if !errors.As(err, &nt) || !strings.Contains(err.Error(), "primary: down (connection refused)") {
		t.Fatalf("no primary: %v", err)
	}
}

func TestLoadBalancedSetSpreads(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "(('standby1','standby2'),'primary')")}})
	count := map[string]int{}
	for i := 0; i < 10; i++ {
		count[choose(t, r, ReadOnly, healthy())]++
	}
	if count["standby1"] != 5 || count["standby2"] != 5 {
		t.Fatalf("spread = %v, want 5 and 5", count)
	}
	// One member down: the other takes all; the primary is not used while a set member is up.
	nodes := healthy()
	nodes[1].Up = false
	for i := 0; i < 4; i++ {
		if got := choose(t, r, ReadOnly, nodes); got != "standby2" {
			t.Fatalf("with standby1 down got %s", got)
		}
	}
}

func TestFallbackAndRefusal(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "('standby1','standby2','primary')")}})
	nodes := healthy()
	if got := choose(t, r, ReadOnly, nodes); got != "standby1" {
		t.Fatalf("first entry: %s", got)
	}
	nodes[1].Up = false
	if got := choose(t, r, ReadOnly, nodes); got != "standby2" {
		t.Fatalf("second entry: %s", got)
	}
	nodes[2].Up = false
	d, err := r.Choose(ReadOnly, nodes)
	if err != nil || d.Node != "primary" || !d.Primary {
		t.Fatalf("listed primary: %+v %v", d, err)
	}

	// Not listed: the primary never serves read intent; the error names the list.
	r = NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "(('standby1','standby2'))")}})
	_, err = r.Choose(ReadOnly, nodes)
	var nt *NoTargetError
	if !errors.As(err, &nt) {
		t.Fatalf("want refusal, got %v", err)
	}
	for _, want := range []string{"('standby1','standby2')", "standby1: down", "standby2: down", "primary: primary, not listed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
}

func TestMaxLagSkipsLaggingStandby(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "('standby1','standby2')")}, MaxLag: 5 * time.Second})
	nodes := healthy()
	nodes[1].Lag = 7 * time.Second
	nodes[2].Lag = 5 * time.Second // equal is within the limit
	if got := choose(t, r, ReadOnly, nodes); got != "standby2" {
		t.Fatalf("got %s, want standby2", got)
	}
	nodes[2].Lag = 6 * time.Second
	_, err := r.Choose(ReadOnly, nodes)
	if err == nil || !strings.Contains(err.Error(), "standby1: lag 7s > max 5s") {
		t.Fatalf("want lag refusal, got %v", err)
	}
}

// A standby whose lag was not measured does not pass a lag limit as if it were caught up:
// it is skipped with why the lag is unknown, even when its lower bound is under the limit.
// Without a limit it routes as any standby; the primary's lag never matters.
func TestMaxLagSkipsStandbyOfUnknownLag(t *testing.T) {
	list := map[string]List{"": mustParse(t, "('standby1','standby2','primary')")}
	nodes := healthy()
	nodes[0].LagUnknown = "not a standby (primary)"
	nodes[1].LagUnknown = "no primary's WAL position seen yet"
	nodes[2].Lag, nodes[2].LagUnknown = time.Second, "behind every WAL position the primary was seen at: at least 1s"
	r := NewRouter(Policy{Lists: list, MaxLag: 5 * time.Second})
	d, err := r.Choose(ReadOnly, nodes)
	if err != nil || d.Node != "primary" {
		t.Fatalf("with a limit and no standby lag known: %+v %v, want the listed primary", d, err)
	}
	r = NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "('standby1','standby2')")}, MaxLag: 5 * time.Second})
	_, err = r.Choose(ReadOnly, nodes)
	for _, want := range []string{"standby1: lag unknown (no primary's WAL position seen yet), max 5s",
		"standby2: lag unknown (behind every WAL position the primary was seen at: at least 1s), max 5s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in the refusal, got %v", want, err)
		}
	}
	r = NewRouter(Policy{Lists: list})
	if got := choose(t, r, ReadOnly, nodes); got != "standby1" {
		t.Fatalf("without a limit: %s, want standby1", got)
	}
	if got := choose(t, r, ReadOnly, nodes); got != "standby1" {
		t.Fatalf("without a limit, again: %s, want standby1 (the list's first entry)", got)
	}
}

func TestRoutingOffSendsReadIntentToPrimary(t *testing.T) {
	r := NewRouter(Policy{Off: true, Lists: map[string]List{"": mustParse(t, "('standby1')")}})
	if got := choose(t, r, ReadOnly, healthy()); got != "primary" {
		t.Fatalf("routing off: %s", got)
	}
}

func TestPerPrimaryListsFollowFailover(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{
		"primary":  mustParse(t, "('standby1','primary')"),
		"standby1": mustParse(t, "('primary','standby1')"),
	}})
	if got := choose(t, r, ReadOnly, healthy()); got != "standby1" {
		t.Fatalf("before failover: %s", got)
	}
	after := []Node{
		{Name: "primary", Up: true, Role: RoleStandby},
		{Name: "standby1", Up: true, Role: RolePrimary},
		{Name: "standby2", Up: true, Role: RoleStandby},
	}
	if got := choose(t, r, ReadOnly, after); got != "primary" {
		t.Fatalf("after failover: %s", got)
	}
	if got := choose(t, r, ReadWrite, after); got != "standby1" {
		t.Fatalf("writes after failover: %s", got)
	}
}

func TestDefaultListIsStandbysThenPrimary(t *testing.T) {
	r := NewRouter(Policy{})
	count := map[string]int{}
	for i := 0; i < 4; i++ {
		count[choose(t, r, ReadOnly, healthy())]++
	}
	if count["standby1"] != 2 || count["standby2"] != 2 {
		t.Fatalf("default spread: %v", count)
	}
	nodes := healthy()
	nodes[1].Up, nodes[2].Up = false, false
	if got := choose(t, r, ReadOnly, nodes); got != "primary" {
		t.Fatalf("default fallback: %s", got)
	}
	l, _ := r.ListFor("primary", healthy())
	if l.String() != "(('standby1','standby2'),'primary')" {
		t.Fatalf("default list %s", l)
	}
}

func TestStalePrimaryIsNotAStandby(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "('standby1','standby2')")}})
	nodes := healthy()
	nodes[1].Role = RoleStalePrimary
	if got := choose(t, r, ReadOnly, nodes); got != "standby2" {
		t.Fatalf("got %s", got)
	}
	nodes[2].Role = RoleUnknown
	_, err := r.Choose(ReadOnly, nodes)
	if err == nil || !strings.Contains(err.Error(), "standby1: not a standby (stale-primary)") {
		t.Fatalf("want refusal naming the stale primary, got %v", err)
	}
}

// A node that refused a session keeps its role: the primary's own list still applies,
// the next member of a load-balanced set takes the session, and a refusing primary is
// named as such.
func TestRefusingNodeIsSkippedAndKeepsItsRole(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{
		"primary": mustParse(t, "(('standby1','standby2'),'primary')"),
		"":        mustParse(t, "('standby2')"),
	}})
	nodes := healthy()
	nodes[1].Refusing = "the database system is shutting down (57P03)"
	for i := 0; i < 3; i++ {
		if got := choose(t, r, ReadOnly, nodes); got != "standby2" {
			t.Fatalf("with standby1 refusing got %s", got)
		}
	}
	nodes[2].Refusing = "connection refused"
	if got := choose(t, r, ReadOnly, nodes); got != "primary" {
		t.Fatalf("with both standbys refusing got %s, want the primary listed last", got)
	}
	nodes[0].Refusing = "sorry, too many clients already (53300)"
	_, err := r.Choose(ReadOnly, nodes)
	if err == nil || !strings.Contains(err.Error(), "standby1: refused a session since its last probe (the database system is shutting down (57P03))") ||
		!strings.Contains(err.Error(), "(('standby1','standby2'),'primary')") {
		t.Fatalf("read-only with all refusing: %v", err)
	}
	_, err = r.Choose(ReadWrite, nodes)
	if err == nil || !strings.Contains(err.Error(), "primary: refused a session since its last probe (sorry, too many clients already (53300))") {
		t.Fatalf("read-write with the primary refusing: %v", err)
	}
}

func TestParseIntent(t *testing.T) {
	for _, s := range []string{"read-only", "ReadOnly", "read_only", "readonly", "RO"} {
		if i, err := ParseIntent(s); err != nil || i != ReadOnly {
			t.Errorf("ParseIntent(%q) = %v, %v", s, i, err)
		}
	}
	for _, s := range []string{"read-write", "ReadWrite", "rw"} {
		if i, err := ParseIntent(s); err != nil || i != ReadWrite {
			t.Errorf("ParseIntent(%q) = %v, %v", s, i, err)
		}
	}
	if _, err := ParseIntent("sometimes"); err == nil {
		t.Error("ParseIntent(sometimes) accepted")
	}
}

// A node skipped for one session (behind the LSN the session must see) is passed over in
// favour of the next member and entry, is named in the refusal, and never keeps the
// primary from the session.
func TestSkippedNodeForOneSession(t *testing.T) {
	r := NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "(('standby1','standby2'),'primary')")}})
	nodes := healthy()
	nodes[1].Skip = "behind: replayed 0/10 of 0/20"
	for i := 0; i < 3; i++ {
		if got := choose(t, r, ReadOnly, nodes); got != "standby2" {
			t.Fatalf("with standby1 skipped got %s", got)
		}
	}
	nodes[2].Skip = "behind: replayed 0/18 of 0/20"
	nodes[0].Skip = "must not happen"
	if got := choose(t, r, ReadOnly, nodes); got != "primary" {
		t.Fatalf("with both standbys skipped got %s, want the primary listed last", got)
	}
	r = NewRouter(Policy{Lists: map[string]List{"": mustParse(t, "('standby1','standby2')")}})
	_, err := r.Choose(ReadOnly, nodes)
	if err == nil || !strings.Contains(err.Error(), "standby1: behind: replayed 0/10 of 0/20") || !strings.Contains(err.Error(), "standby2: behind") {
		t.Fatalf("all skipped: %v", err)
	}
}
