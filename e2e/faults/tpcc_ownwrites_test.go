package faults

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
)

// tpcc run --read-intent with the stale-read probe, in client mode, checks each
// Order-Status that follows the VU's own Payment against it. With the standby's replay held
// 300 ms behind, reads on the standby miss the payment: the result's own-writes section and
// the line under the table count them. In functions mode they are not measured, and the
// step says why.
func TestTPCCOwnWriteReads(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	env := map[string]string{"AGBENCH_HOME": home}
	res := filepath.Join(t.TempDir(), "results")
	if code, out, errs := e2etest.Run(t, env, "tpcc", "build", "--cluster", "t", "--warehouses", "1"); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	stby := slowReplay(t, topo, "300ms")
	run := func(args ...string) (*result.Result, string) {
		dir := filepath.Join(res, args[1])
		code, out, errs := e2etest.Run(t, env, append([]string{"tpcc", "run", "--cluster", "t", "--read-intent", "--vus", "2",
			"--rampup", "0s", "--duration", "3s", "--stale-probe", "--results", dir}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*", "result.json"))
		if len(files) != 1 {
			t.Fatalf("%v: result files %v", args, files)
		}
		r, err := result.Read(files[0])
		if err != nil {
			t.Fatal(err)
		}
		return r, out
	}

	// routing=off reads on the primary (never stale), routing=on on the standby.
	r, out := run("--mode", "client", "--compare", "routing=off,on")
	prim := topo.Primary().Name
	for i := range r.Steps {
		st := &r.Steps[i]
		p, err := st.StaleProbe(result.StaleOwnWrites)
		if err != nil || p == nil || p.Mode != result.StaleOwnWrites {
			t.Fatalf("%s: own-writes section %+v, %v", st.Variant, p, err)
		}
		node := stby.Name
		if strings.Contains(st.Variant, "off") {
			node = prim
		}
		n := p.Nodes[node]
		if len(p.Nodes) != 1 || n.Reads == 0 || p.Errors != 0 {
			t.Fatalf("%s: own-write reads %+v, want on %s only (errors %d: %s)", st.Variant, p.Nodes, node, p.Errors, p.ErrorSample)
		}
		if node == prim && n.Stale != 0 {
			t.Errorf("%s: %d of %d own-write reads on the primary stale", st.Variant, n.Stale, n.Reads)
		}
		if node == stby.Name && n.Stale == 0 {
			t.Errorf("%s: replay 300 ms behind, yet none of %d own-write reads on %s stale", st.Variant, n.Reads, node)
		}
		if want := "own-writes " + node + ": "; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
		t.Logf("%s: %d/%d Order-Status after own Payment stale on %s", st.Variant, n.Stale, n.Reads, node)
	}

	r, out = run("--mode", "functions")
	st := &r.Steps[0]
	if p, err := st.StaleProbe(result.StaleOwnWrites); err != nil || p != nil {
		t.Errorf("functions mode: own-writes section %+v, %v; want none", p, err)
	}
	if !strings.Contains(strings.Join(st.Warnings, "\n"), "own-write stale reads not measured") {
		t.Errorf("functions mode: no warning says the own-write reads were not measured: %q", st.Warnings)
	}
	if !strings.Contains(out, "own-write stale reads not measured") || strings.Contains(out, "own-writes ") {
		t.Errorf("functions mode: the output should say the own-write reads were not measured, and show none:\n%s", out)
	}
}
