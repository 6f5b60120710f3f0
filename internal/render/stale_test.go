package render

import (
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/result"
)

// The stale-read lines of each probe mode: the eventual probe's shares and times per node,
// tpcc's own-write reads, a step whose probe never read, and failed probes.
func TestStaleLines(t *testing.T) {
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	r := &result.Result{Steps: []result.Step{
		{Index: 0, VUs: 2, Variant: "routing=on", Window: result.Window{Start: at, End: at.Add(10 * time.Second)}},
		{Index: 1, VUs: 4, Window: result.Window{Start: at, End: at.Add(10 * time.Second)}},
		{Index: 2, VUs: 8},
	}}
	put := func(i int, s result.StaleStep) {
		if err := r.Steps[i].SetExtra(result.StaleKey(s.Mode), s); err != nil {
			t.Fatal(err)
		}
	}
	put(0, result.StaleStep{Mode: result.StaleEventual, Nodes: map[string]result.StaleNode{
		"standby2": {Reads: 40, Stale: 10, Unseen: 1, Visible: result.Hist{Count: 9, P50: 1500, P99: 9000}, Session: result.Hist{Count: 40, P50: 800, P99: 2100}},
		"standby1": {Reads: 50, Stale: 0, Session: result.Hist{Count: 50, P50: 700, P99: 1900}},
	}})
	put(1, result.StaleStep{Mode: result.StaleOwnWrites, Nodes: map[string]result.StaleNode{"standby1": {Reads: 200, Stale: 3}}})
	put(2, result.StaleStep{Mode: result.StaleCausal, Errors: 2, ErrorSample: "connection refused"})
	var b strings.Builder
	Stale(&b, r)
	checkGolden(t, "stale", b.String())
	for _, want := range []string{
		"  step 1 (routing=on) eventual standby1: 0/50 stale (0.0%), visible p50 – ms p99 – ms, start p50 0.70 ms p99 1.90 ms\n",
		"  step 1 (routing=on) eventual standby2: 10/40 stale (25.0%), visible p50 1.50 ms p99 9.00 ms, start p50 0.80 ms p99 2.10 ms, 1 never seen\n",
		"  step 2 own-writes standby1: 3/200 Order-Status after the VU's own Payment saw fewer payments (1.5% stale)\n",
		"  step 3 causal: – no probe read ran\n", "  step 3 causal: 2 probe(s) failed: connection refused\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	var none strings.Builder
	Stale(&none, &result.Result{Steps: []result.Step{{}}})
	if none.Len() != 0 {
		t.Errorf("a run without the probe prints %q", none.String())
	}
}
