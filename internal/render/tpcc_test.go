package render

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

func TestGroupInt(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 29000.4: "29,000", 1234567: "1,234,567"} {
		if got := groupInt(in); got != want {
			t.Errorf("groupInt(%v) = %q, want %q", in, got, want)
		}
	}
}

// A step through a failover prints its errors by SQLSTATE with their times, its lost
// sessions, and "–" for server figures that were not measured (never 0).
func TestTPCCRunPrintsFaultsAndAbsentFigures(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	st := result.Step{Index: 0, VUs: 4, Complete: true, Window: result.Window{Start: t0, End: t0.Add(time.Minute)},
		Ops:      map[string]*result.Op{result.TPCCOps[0]: {Count: 7299, Errors: 3}},
		Counters: map[string]float64{result.TPCCNOPM: 7299, result.TPCCTPM: 16000, result.TPCCPrimaryTPM: 16000, result.TPCCServerNOPM: 7299, result.TPCCRolledBack: 70},
		Errors: []result.ErrorClass{{SQLState: "57P01", Message: "FATAL: terminating connection due to administrator command", Count: 3,
			First: t0.Add(12 * time.Second), Last: t0.Add(12500 * time.Millisecond)}},
		Reconnects: &result.Reconnects{Lost: 4, Count: 4, Failed: 9, DownSeconds: 6.2, MaxDownSeconds: 1.7},
	}
	var b strings.Builder
	TPCC(&b, TPCCSetup{Warehouses: 1, Mode: "functions"}, []result.Step{st})
	out := b.String()
	for _, want := range []string{"7,299", "errors 57P01 ×3 12.0s-12.5s: FATAL: terminating", "sessions lost 4, made again 4; 6.2s without a session (longest 1.7s), 9 failed attempts",
		"server NOPM 7,299, TPM – (client"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "16,000  7,299  0") {
		t.Errorf("absent server TPM printed as 0:\n%s", out)
	}
}

// The recorded tpcc run's tables, rebuilt from its result and its configuration, begin what
// the command printed, byte for byte.
func TestTPCCOfARecordedRun(t *testing.T) {
	r := recorded(t, "tpcc-run")
	cfg := r.Meta.Config
	s := TPCCSetup{Repeat: 1}
	if w, ok := cfg["warehouses"].(float64); ok {
		s.Warehouses = int(w)
	}
	s.Mode, _ = cfg["mode"].(string)
	if c, _ := cfg["compare"].(string); c != "" {
		name, values, _ := strings.Cut(c, "=")
		for _, v := range strings.Split(values, ",") {
			s.Variants = append(s.Variants, name+"="+v)
		}
	}
	var b strings.Builder
	TPCC(&b, s, r.Steps)
	if golden := commandGolden(t, "tpcc-run"); !strings.HasPrefix(golden, b.String()) {
		t.Errorf("the tables are not how the command's output begins:\n%s", b.String())
	}
	for _, want := range []string{"routing=off", "routing=on", "NEWORD", "server NOPM"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

// A step of terminals is said as its terminals over the pool's sessions, never as VUs; a
// segment's steps as its share of the whole run's, naming the segment; and a segment's
// terminals as its share on its own warehouses, their rule judged on those.
func TestTPCCSaysTerminalsAndSegments(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	step := func(params map[string]string, vus int, ts *result.TerminalsStep) result.Step {
		st := result.Step{Params: params, VUs: vus, Complete: true, Window: result.Window{Start: t0, End: t0.Add(time.Minute)},
			Ops: map[string]*result.Op{result.TPCCOps[0]: {Count: 100}}, Counters: map[string]float64{result.TPCCNOPM: 100}}
		if ts != nil {
			if err := st.SetExtra(result.ExtraTerminals, *ts); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	terms := map[string]string{result.SessionsKnob: "3", result.TerminalsKnob: "30"}
	seg := &result.Segment{Index: 1, Of: 3, Run: "r"}
	for _, c := range []struct {
		name      string
		seg       *result.Segment
		st        result.Step
		want, not []string
	}{
		{"terminals", nil, step(terms, 0, &result.TerminalsStep{Terminals: 30, Sessions: 3, Warehouses: 3, ThinkScale: 1}),
			[]string{"terminals/sessions", "30/3", "step 1: 30 terminals over 3 sessions,", "terminals: 30 on 3 warehouses (10 per warehouse) over 3 sessions",
				"within the specification's terminal rule"}, []string{"VUs"}},
		{"segment", seg, step(map[string]string{"vus": "3"}, 1, nil),
			[]string{"segment 1/3 of run r: every load and figure below is this segment's share", "1 of 3", "step 1: segment 1/3: 1 of 3 VUs,"}, nil},
		{"terminals segment", seg, step(terms, 0, &result.TerminalsStep{Terminals: 10, Sessions: 1, Warehouses: 3, SegmentWarehouses: 1, ThinkScale: 1, TpmC: 100, TpmCPerWarehouse: 100}),
			[]string{"10 of 30/1 of 3", "step 1: segment 1/3: 10 of 30 terminals over 1 of 3 sessions,",
				"terminals: segment 1/3: 10 of 30 on its 1 of 3 warehouses (10 per warehouse) over 1 of 3 sessions; agbench merge judges the whole run",
				"within the specification's terminal rule", "tpmC of this segment 100, 100.00 per warehouse"}, []string{"VUs"}},
	} {
		var b strings.Builder
		TPCC(&b, TPCCSetup{Warehouses: 3, Mode: "functions", Segment: c.seg}, []result.Step{c.st})
		out := b.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out)
			}
		}
		for _, w := range c.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: output says %q:\n%s", c.name, w, out)
			}
		}
	}
}
