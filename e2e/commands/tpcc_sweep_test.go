package commands

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// A tpcc sweep on a local cluster with a standby: the result carries the wait profile, the
// standby's replication lag, the device under the data directories, and the analysis; the
// output ends with the knee line, the saturation sentence and the verdicts, among them that
// a one-warehouse database fits in memory.
func TestTPCCSweepIsAnalysed(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	home := env["AGBENCH_HOME"]
	db := clustertest.OwnDatabase(t, topo)
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--cluster", topo.Name, "-d", db, "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	results := t.TempDir()
	code, out, errs := e2etest.Run(t, env, "tpcc", "run", "--cluster", topo.Name, "-d", db, "--vus", "1,2,4,8", "--rampup", "1s", "--duration", "3s",
		"--slo", "p99<50ms", "--results", results)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	tail := out[strings.Index(out, "\nanalysis\n"):]
	for _, w := range []string{"knee: characteristic latency", "SLO p99<50ms", "saturated: ", "validity:", "! fits-in-memory", "! window-short"} {
		if !strings.Contains(tail, w) {
			t.Errorf("analysis lacks %q:\n%s", w, tail)
		}
	}
	files, _ := filepath.Glob(filepath.Join(results, "*", "result.json"))
	if len(files) != 1 {
		t.Fatalf("result files %v", files)
	}
	res, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	prim, stby := topo.Primary().Name, topo.Standbys()[0].Name
	st := res.Steps[len(res.Steps)-1]
	for _, k := range []string{"pg." + prim + ".wait.cpu", "pg." + prim + ".commits_per_s", "pg." + prim + ".standby." + stby + ".replay_lag_s", "os.cpu.busy"} {
		if s, ok := st.Series[k]; !ok || len(s.V) == 0 {
			t.Errorf("result lacks series %s", k)
		}
	}
	devices := 0
	for k := range st.Series {
		if strings.HasPrefix(k, "disk.") && strings.HasSuffix(k, ".iops") {
			devices++
		}
	}
	if devices == 0 {
		t.Errorf("no device series (data directories under %s)", home)
	}
	if st.Counters["pg."+prim+".wait.cpu"]+st.Counters["pg."+prim+".wait.log"]+st.Counters["pg."+prim+".wait.client"] <= 0 {
		t.Errorf("empty wait profile: %v", st.Counters)
	}
	var run analyze.Run
	if err := json.Unmarshal(res.Analysis, &run); err != nil || len(run.Variants) != 1 {
		t.Fatalf("stored analysis: %v %s", err, res.Analysis)
	}
	a := run.Variants[0].Result
	if a.Knee.Characteristic == nil || a.Knee.Characteristic.Load != 1 || a.Saturated.Sentence == "" {
		t.Errorf("analysis %+v", a)
	}
	// The samplers' names are what the analysis reads: the evidence is not empty.
	e := run.Variants[0].Input.Evidence[len(run.Variants[0].Input.Evidence)-1]
	if e.Waits.Total() <= 0 || e.CPUBusy <= 0 || e.Device.Name == "" || len(e.TopWaits) == 0 || e.Standby != stby {
		t.Errorf("evidence read from the result: %+v", e)
	}
	t.Logf("analysis of this run:%s", tail)
}
