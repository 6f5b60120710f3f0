package listener

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/routing"
)

func TestTakeCausal(t *testing.T) {
	now := time.Now()
	params := map[string]string{"user": "u", "options": "-c work_mem=1MB -c agbench.min_lsn=0/3000148 --agbench.consistency=session"}
	need, err := takeCausal(params, Eventual, now)
	if err != nil || need.minLSN != 0x3000148 || !need.session || !need.start.Equal(now) {
		t.Fatalf("takeCausal = %+v, %v", need, err)
	}
	if params["options"] != "-c work_mem=1MB" {
		t.Fatalf("options left: %q", params["options"])
	}
	params = map[string]string{routing.MinLSNParam: "1/0", ConsistencyParam: "eventual"}
	need, err = takeCausal(params, Session, now)
	if err != nil || need.minLSN != 1<<32 || need.session || len(params) != 0 {
		t.Fatalf("takeCausal = %+v, %v, params %v", need, err, params)
	}
	need, err = takeCausal(map[string]string{}, Session, now)
	if err != nil || !need.any() || need.minLSN != 0 {
		t.Fatalf("listener default session: %+v, %v", need, err)
	}
	if need, _ := takeCausal(map[string]string{"user": "u"}, Eventual, now); need.any() {
		t.Fatalf("no requirement: %+v", need)
	}
	for _, c := range []struct {
		params      map[string]string
		param, code string
	}{
		{map[string]string{"options": "-c agbench.min_lsn=0/zz"}, routing.MinLSNParam, codeInvalidTextRepr},
		{map[string]string{routing.MinLSNParam: "12345"}, routing.MinLSNParam, codeInvalidTextRepr},
		{map[string]string{ConsistencyParam: "strong"}, ConsistencyParam, codeInvalidParamValue},
	} {
		_, err := takeCausal(c.params, Eventual, now)
		var bp *BadParamError
		if !errors.As(err, &bp) || bp.Param != c.param || bp.Code != c.code || !strings.Contains(err.Error(), c.param) {
			t.Errorf("%v: %v", c.params, err)
		}
	}
}

func TestParseConsistency(t *testing.T) {
	for s, want := range map[string]Consistency{"eventual": Eventual, "Session": Session, " session ": Session} {
		if got, err := ParseConsistency(s); err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	if _, err := ParseConsistency("strong"); err == nil {
		t.Error("strong accepted")
	}
}

// A primary's probe reading (its write position) never stands for the primary in causal
// routing: a client's insert position read before it may be ahead of it, and would be
// refused as beyond the primary's WAL. A standby's replay position is taken.
func TestWatchTakesOnlyStandbyProbeReadings(t *testing.T) {
	w := newLSNWatch(Backend{Name: "n"}, time.Second)
	w.observe(lsnReading{lsn: 100, insert: 100, at: time.Now()})
	if r := w.known(); !r.at.IsZero() {
		t.Fatalf("a primary's probe reading was taken: %+v", r)
	}
	at := time.Now()
	w.observe(lsnReading{lsn: 90, insert: 90, inRecovery: true, at: at})
	w.observe(lsnReading{lsn: 80, insert: 80, inRecovery: true, at: at.Add(-time.Millisecond)})
	if r := w.known(); r.lsn != 90 || !r.at.Equal(at) {
		t.Fatalf("standby readings: known %+v, want the newer one (90)", r)
	}
}
