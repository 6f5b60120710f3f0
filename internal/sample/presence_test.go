package sample

import (
	"fmt"
	"testing"
	"time"
)

// A synchronous standby that leaves pg_stat_replication at the third reading and comes back
// at the fifth, and an asynchronous one that leaves for good: each absence with when it was
// last seen, missing and back (or to the window's end).
func TestStandbyAbsences(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	p := newPresence(t0)
	reading := func(sec float64, standbys ...string) pgCounters {
		c := pgCounters{at: t0.Add(time.Duration(sec * float64(time.Second))), standbys: map[string]standbyState{}}
		for _, s := range standbys {
			c.standbys[s] = standbyState{sync: s == "standby1"}
		}
		return c
	}
	p.note(reading(0, "standby1", "standby2"))
	p.note(reading(1, "standby1", "standby2"))
	p.note(reading(2, "standby2"))
	p.note(reading(3))
	p.note(reading(4, "standby1"))
	got := fmt.Sprintf("%+v", p.result(t0.Add(5*time.Second)))
	want := "[{Standby:standby1 Sync:true LastSeen:1 From:2 To:4 ToEnd:false} {Standby:standby2 Sync:false LastSeen:2 From:3 To:5 ToEnd:true}]"
	if got != want {
		t.Fatalf("absences\n%s, want\n%s", got, want)
	}
}
