package commands

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/listener"
	"github.com/agbench/agbench/internal/target"
)

// stress and scan against a real cluster with one standby, routing off and on: the tables,
// where sessions landed, and the result files.
func TestStressAndScanOnCluster(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	db := clustertest.OwnDatabase(t, topo)
	res := filepath.Join(t.TempDir(), "results")

	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-d", db, "--init", "2000", "--query", "SELECT count(*) FROM customer WHERE c_id <= $1",
		"--param-range", "1:2000", "--threads", "1,2", "--iterations", "30", "--compare", "routing=off,on", "--results", res)
	if code != 0 {
		t.Fatalf("stress: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	for _, want := range []string{"routing=off", "routing=on", "time (s)", "it/s", "MB/s",
		"landed  routing=off: " + topo.Primary().Name + " (primary) 3", "landed  routing=on: " + topo.Standbys()[0].Name + " (standby) 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("stress output lacks %q:\n%s", want, out)
		}
	}
	r := e2etest.PrintedResult(t, out)
	if !strings.Contains(r.Meta.Topology.Listener, "routing=on 127.0.0.1:") {
		t.Errorf("result does not name the in-process listeners: %q", r.Meta.Topology.Listener)
	}
	if !r.Complete || len(r.Steps) != 4 || r.Meta.Server == nil || r.Meta.Topology.Cluster != topo.Name {
		t.Fatalf("result: complete %v, %d steps, server %v", r.Complete, len(r.Steps), r.Meta.Server)
	}
	order := []string{}
	for _, st := range r.Steps {
		order = append(order, st.Params["threads"]+st.Params["routing"])
		q := st.Ops["query"]
		vus := st.VUs
		if q == nil || q.Count != int64(30*vus) || q.Rows != q.Count || st.Counters["buffer_hits"] <= 0 {
			t.Errorf("step %d: op %+v counters %v", st.Index, q, st.Counters)
		}
		if len(st.Sessions) != 1 || st.Sessions[0].Count != vus || st.Sessions[0].InRecovery != (st.Params["routing"] == "on") {
			t.Errorf("step %d (%s): sessions %+v", st.Index, st.Variant, st.Sessions)
		}
	}
	if strings.Join(order, " ") != "1off 1on 2off 2on" {
		t.Errorf("steps ran in order %v, want interleaved", order)
	}

	code, out, errs = e2etest.Run(t, env, "scan", "--cluster", topo.Name, "-d", db, "--rows", "1500", "--compare", "routing=off,on", "--results", res)
	if code != 0 {
		t.Fatalf("scan: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	r = e2etest.PrintedResult(t, out)
	for _, st := range r.Steps {
		if st.Ops["read"] == nil || st.Ops["read"].Rows != 1500 || st.Ops["read"].Bytes < 1500*100 {
			t.Errorf("scan step %d: %+v", st.Index, st.Ops["read"])
		}
	}
	if !strings.Contains(out, "landed  routing=on: "+topo.Standbys()[0].Name+" (standby) 1") {
		t.Errorf("scan output:\n%s", out)
	}

	// A fixed rate faster than a deliberately slow query: latencies count from each
	// operation's scheduled time, so the queueing delay shows (coordinated omission).
	code, out, errs = e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-d", db, "--query", "SELECT pg_sleep(0.05)",
		"--threads", "1", "--iterations", "20", "--rate", "40", "--sample=false", "--results", res)
	if code != 0 {
		t.Fatalf("fixed rate: exit %d\n%s\n%s", code, out, errs)
	}
	st := e2etest.PrintedResult(t, out).Steps[0]
	// The 20th query is due at 475 ms but cannot start before 19 × 50 ms = 950 ms.
	if q := st.Ops["query"]; q.Count != 20 || q.Latency.Max < 475_000 || st.LateStarts < 10 || st.Rate != 40 {
		t.Fatalf("fixed rate: op %+v late %d", q, st.LateStarts)
	}

	// Through a listener given by connection string, read intent lands on the standby.
	cfg := e2etest.OnFreePort(listener.ConfigFromTopology(topo))
	l, err := listener.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	host, port, _ := net.SplitHostPort(l.Addr().String())
	lcs := target.Redirect(topo.ConnString(topo.Primary(), ""), host, port)
	code, out, errs = e2etest.Run(t, env, "stress", "--listener", lcs, "--intent", "read-only", "--query", "SELECT 1",
		"--threads", "2", "--iterations", "5", "--sample=false", "--results", res)
	if code != 0 || !strings.Contains(out, "landed  sessions: "+topo.Standbys()[0].Name+" (standby) 2") {
		t.Fatalf("read intent through --listener: exit %d\n%s\n%s", code, out, errs)
	}

	// SQL that fails is bad input, named; nothing is written.
	code, _, errs = e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-d", db, "--query", "SELECT * FROM no_such_table", "--results", res+"-bad")
	if code != 2 || !strings.Contains(errs, "no_such_table") {
		t.Fatalf("failing SQL: exit %d, stderr %q", code, errs)
	}
	code, _, errs = e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-d", db, "--query", "SELECT $1::int + $2::int", "--param-range", "1:5", "--results", res+"-bad")
	if code != 2 || !strings.Contains(errs, "takes 2 parameter(s), --param-file/--param-range give 1") {
		t.Fatalf("parameter count: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(res + "-bad"); !os.IsNotExist(err) {
		t.Fatal("bad SQL wrote a result")
	}
}
