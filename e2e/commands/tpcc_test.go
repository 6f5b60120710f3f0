package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/tpcc"
)

// TestTPCCCommands drives build, run (both modes, routing off and on), check and drop
// through the command line on a real cluster with a standby (the shared one, in a database of
// its own).
func TestTPCCCommands(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	target := []string{"--cluster", topo.Name, "-d", clustertest.OwnDatabase(t, topo)}
	cli := func(args ...string) (int, string, string) {
		return e2etest.Run(t, env, append(args, target...)...)
	}

	if code, _, errs := cli("tpcc", "run", "--vus", "1", "--duration", "1s"); code != 2 || !strings.Contains(errs, "build first") {
		t.Fatalf("run before build: exit %d, %q", code, errs)
	}
	if code, out, errs := cli("tpcc", "build", "--warehouses", "1", "--seed", "3"); code != 0 || !strings.Contains(out, "built 1 warehouses") {
		t.Fatalf("build: exit %d, %q %q", code, out, errs)
	}
	if code, _, errs := cli("tpcc", "build", "--warehouses", "1"); code != 2 || !strings.Contains(errs, "already built") {
		t.Fatalf("second build: exit %d, %q", code, errs)
	}
	if code, _, errs := cli("tpcc", "run", "--vus", "1,500", "--duration", "1s"); code != 2 || !strings.Contains(errs, "max_connections") {
		t.Fatalf("run with too many VUs: exit %d, %q", code, errs)
	}
	results := t.TempDir()
	for _, mode := range []string{"functions", "client"} {
		code, out, errs := cli("tpcc", "run", "--mode", mode, "--vus", "2", "--rampup", "1s", "--duration", "4s",
			"--compare", "routing=off,on", "--check", "--results", results)
		if code != 0 {
			t.Fatalf("run --mode %s: exit %d\n%s\n%s", mode, code, out, errs)
		}
		for _, want := range []string{"routing=off", "routing=on", "NOPM", "NEWORD p95", "PAYMENT", "OSTAT", "DELIVERY", "SLEV",
			"all 11 consistency conditions hold"} {
			if !strings.Contains(out, want) {
				t.Errorf("run --mode %s: output lacks %q:\n%s", mode, want, out)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(results, "*-tpcc-run", "result.json"))
	if len(files) != 2 {
		t.Fatalf("result files: %v", files)
	}
	res, err := result.Read(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Steps) != 2 {
		t.Fatalf("result: complete %v, %d steps", res.Complete, len(res.Steps))
	}
	for _, st := range res.Steps {
		onStandby := st.Counters[tpcc.CounterReadOnStandby]
		if st.Params["routing"] == "on" && onStandby == 0 {
			t.Errorf("routing on: no read transaction ran on the standby: %v", st.Counters)
		}
		if st.Params["routing"] == "off" && onStandby != 0 {
			t.Errorf("routing off: %v read transactions ran on a standby", onStandby)
		}
		if st.Counters[tpcc.CounterNOPM] <= 0 || st.Counters[tpcc.CounterServerNOPM] <= 0 {
			t.Errorf("step %d: NOPM %v, server NOPM %v", st.Index, st.Counters[tpcc.CounterNOPM], st.Counters[tpcc.CounterServerNOPM])
		}
		standbys := 0
		for _, s := range st.Sessions {
			if s.InRecovery {
				standbys += s.Count
			}
		}
		if (st.Params["routing"] == "on") != (standbys == 2) {
			t.Errorf("routing %s: %d sessions on a standby (%v)", st.Params["routing"], standbys, st.Sessions)
		}
	}
	if code, out, _ := cli("tpcc", "drop"); code != 0 || !strings.Contains(out, "dropped") {
		t.Fatalf("drop: exit %d, %q", code, out)
	}
	if code, _, errs := cli("tpcc", "check"); code != 2 || !strings.Contains(errs, "no tpcc schema") {
		t.Fatalf("check after drop: exit %d, %q", code, errs)
	}
	// Built without the functions, a run in functions mode is refused; client mode runs.
	if code, out, errs := cli("tpcc", "build", "--warehouses", "1", "--mode", "client"); code != 0 {
		t.Fatalf("build --mode client: exit %d, %q %q", code, out, errs)
	}
	if code, _, errs := cli("tpcc", "run", "--duration", "1s"); code != 2 || !strings.Contains(errs, "--mode client") {
		t.Fatalf("functions run on a client build: exit %d, %q", code, errs)
	}
	if code, out, errs := cli("tpcc", "run", "--mode", "client", "--rampup", "0s", "--duration", "2s", "--results", results); code != 0 {
		t.Fatalf("client run on a client build: exit %d\n%s\n%s", code, out, errs)
	}
	_ = os.Remove(results)
}
