package experiment

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/target"
)

// The stale-read probe's transactions on the primary (its writes, and its reads
// when they land there) are agbench's own, so that tpcc's server TPM leaves them out as it
// leaves out the samplers': every probe counts at least its INSERT, one read and the
// question of where the read landed.
func TestStaleProbeCountsItsOwnTransactions(t *testing.T) {
	t.Parallel()
	topo := clustertest.Shared(t, clustertest.Options{})
	ctx := context.Background()
	l := &Load{Target: &target.Target{Topo: topo, Primary: topo.ConnString(topo.Primary(), "")}}
	ids := new(atomic.Int64)
	p, err := newStaleProbe(ctx, l, result.StaleEventual, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	key := p.ownKey
	if key == "" {
		t.Fatal("the probe names no key for its own transactions")
	}
	before := result.OwnXacts(key)
	step := &result.Step{}
	if err := p.Start(ctx, step); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ids.Load() < 20; {
		if time.Now().After(deadline) {
			t.Fatalf("%d probes in 2 minutes", ids.Load())
		}
		time.Sleep(10 * time.Millisecond) // polling the probes made so far
	}
	if err := p.Stop(ctx, step); err != nil {
		t.Fatal(err)
	}
	own := result.OwnXacts(key) - before
	st, err := step.StaleProbe(result.StaleEventual)
	if err != nil || st == nil {
		t.Fatalf("no stale section: %v", err)
	}
	if st.Errors > 0 {
		t.Fatalf("probe errors: %s", st.ErrorSample)
	}
	var reads int64
	for _, n := range st.Nodes {
		reads += n.Reads
	}
	if reads == 0 {
		t.Fatal("the probe read nothing")
	}
	if own < 3*reads {
		t.Errorf("own transactions counted %d for %d probes on the primary, want at least %d", own, reads, 3*reads)
	}
}
