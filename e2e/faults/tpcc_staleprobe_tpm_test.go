package faults

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// tpcc run --read-intent --stale-probe: the probe's writes on the primary are
// agbench's own transactions, left out of server TPM, so the TPM cross-check holds on a
// valid run (before, the probe added some 3,000 commits a minute to the server's count).
func TestTPCCStaleProbeLeftOutOfServerTPM(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	env := map[string]string{"AGBENCH_HOME": home}
	dir := filepath.Join(t.TempDir(), "results")
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--cluster", "t", "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := e2etest.Run(t, env, "tpcc", "run", "--cluster", "t", "--read-intent", "--vus", "1",
		"--rampup", "0s", "--duration", "10s", "--stale-probe", "--results", dir)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "result.json"))
	if len(files) != 1 {
		t.Fatalf("result files %v", files)
	}
	r, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	st := &r.Steps[0]
	c := st.Counters
	t.Logf("client primary TPM %.0f, server TPM %.0f, own transactions left out %.0f", c[tpcc.CounterPrimaryTPM], c[tpcc.CounterServerTPM], c[tpcc.CounterSamplerXacts])
	if _, ok := c[tpcc.CounterServerTPM]; !ok {
		t.Fatalf("server TPM absent: %q", st.Warnings)
	}
	// Each probe wrote once on the primary: at least that many transactions are agbench's own.
	p, err := st.StaleProbe(result.StaleEventual)
	if err != nil || p == nil {
		t.Fatalf("no stale-read section: %v", err)
	}
	var probes int64
	for _, n := range p.Nodes {
		probes += n.Reads
	}
	if probes == 0 || c[tpcc.CounterSamplerXacts] < float64(probes) {
		t.Errorf("%d probes wrote on the primary, yet only %.0f own transactions were left out of server TPM", probes, c[tpcc.CounterSamplerXacts])
	}
	for _, w := range st.Warnings {
		if strings.Contains(w, "TPM: client") {
			t.Errorf("the TPM cross-check fired on a valid run: %s", w)
		}
	}
}
