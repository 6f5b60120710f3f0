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
	want := "[{Standby:standby1 Silent:false Sync:true LastSeen:1 From:2 To:4 ToEnd:false} {Standby:standby2 Silent:false Sync:false LastSeen:2 From:3 To:5 ToEnd:true}]"
	if got != want {
		t.Fatalf("absences\n%s, want\n%s", got, want)
	}
}

// A synchronous standby frozen with WAL to confirm: silent from its last reply until it
// answers again. An idle one that has confirmed everything is not silent however long it
// waits between replies (wal_receiver_status_interval).
func TestSilentStandby(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	p := newPresence(t0)
	reading := func(sec, frozenSinceReply, idleSinceReply float64) pgCounters {
		return pgCounters{at: t0.Add(time.Duration(sec * float64(time.Second))), standbys: map[string]standbyState{
			"standby1": {sync: true, sinceReply: frozenSinceReply, unflushed: 8192},
			"standby2": {sinceReply: idleSinceReply},
		}}
	}
	p.note(reading(0, 0.01, 1))
	p.note(reading(1, 0.2, 2))
	p.note(reading(6, 5.2, 7)) // last reply at 0.8 s
	p.note(reading(7, 6.2, 8))
	p.note(reading(8, 0.1, 9))
	p.note(reading(9, 5.5, 9.5)) // silent again from 3.5 s, to the end
	got := fmt.Sprintf("%+v", p.result(t0.Add(10*time.Second)))
	want := "[{Standby:standby1 Silent:true Sync:true LastSeen:0.8 From:0.8 To:8 ToEnd:false} {Standby:standby1 Silent:true Sync:true LastSeen:3.5 From:3.5 To:10 ToEnd:true}]"
	if got != want {
		t.Fatalf("absences\n%s, want\n%s", got, want)
	}
}
