package commands

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/result"
)

// stress reads one node's host from its node_exporter and the other's through a
// Prometheus server; bad sources are refused before anything runs.
func TestStressReadsHostsFromExportersAndPrometheus(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	p, s := topo.Primary().Name, topo.Standbys()[0].Name
	ex1, ex2 := hostmetricstest.StartExporter(t), hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex2.Addr)
	res := filepath.Join(t.TempDir(), "results")

	// A window of 4 s: the server's scrapes (every second) nearest its open and close lie up
	// to a second or so outside it, which a window of 2 s could see outweigh it.
	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-q", "SELECT 1", "--threads", "1", "--duration", "4s",
		"--host-metrics", p+"="+ex1.URL, "--prometheus", prom.URL, "--prometheus-instance", s+"="+ex2.Addr, "--results", res)
	if code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, out, errs)
	}
	r := e2etest.PrintedResult(t, out)
	st := &r.Steps[0]
	sec, err := st.Hosts()
	if err != nil || sec == nil {
		t.Fatalf("hosts section: %v", err)
	}
	for node, source := range map[string]string{p: ex1.URL, s: prom.URL} {
		src := sec.Nodes[node]
		if !strings.HasPrefix(src.Source, source) || src.Scrapes < 3 || src.Failed != 0 || src.Absent != "" {
			t.Errorf("%s: %+v", node, src)
		}
		for _, fig := range []string{result.HostCPUBusy, result.HostRunQueue, result.HostMemAvailable, result.HostNetRxBPS} {
			if _, ok := st.Counters[result.HostName(node, fig)]; !ok {
				t.Errorf("%s: no %s (%s)", node, fig, src.Why(fig))
			}
		}
	}

	bad := filepath.Join(t.TempDir(), "results")
	stopped := hostmetricstest.StartExporter(t)
	stopped.Stop()
	// A hung exporter and a hung server accept the connection and answer nothing: each
	// check is refused after its bound (5 s), not waited on.
	frozen := hostmetricstest.StartExporter(t)
	frozen.Freeze(t)
	frozenProm := hostmetricstest.StartPrometheus(t, ex2.Addr)
	frozenProm.Freeze(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--host-metrics", "nosuch=" + ex1.URL}, "the target has no node nosuch (its nodes: " + p},
		{[]string{"--host-metrics", p + "=http://" + ex1.Addr + "/index.html"}, "--host-metrics " + p + "=http://" + ex1.Addr + "/index.html"},
		{[]string{"--host-metrics", p + "=" + prom.URL + "/metrics"}, "not a node_exporter"},
		{[]string{"--host-metrics", p + "=" + stopped.URL}, "connection refused"},
		{[]string{"--host-metrics", p + "=" + frozen.URL}, "--host-metrics " + p + "=" + frozen.URL + ": " + frozen.URL + " did not answer within 5.0 s"},
		{[]string{"--prometheus", frozenProm.URL, "--prometheus-instance", s + "=" + ex2.Addr}, "--prometheus: no answer from a Prometheus server's HTTP API: " + frozenProm.URL + " did not answer within 5.0 s"},
		{[]string{"--prometheus", prom.URL, "--prometheus-instance", p + "=elsewhere:9100"}, "--prometheus-instance " + p + "=elsewhere:9100: "},
		{[]string{"--prometheus", prom.URL, "--prometheus-instance", p + "=elsewhere:9100"}, "series have instance: " + ex2.Addr},
		{[]string{"--prometheus", "http://" + ex1.Addr, "--prometheus-instance", p + "=x"}, "--prometheus http://" + ex1.Addr + ": answers HTML/exposition text, not Prometheus's HTTP API (/api/v1/…); for a node_exporter use --host-metrics NODE=URL\n"},
	} {
		args := append([]string{"stress", "--cluster", topo.Name, "-q", "SELECT 1", "--threads", "1", "--iterations", "1", "--results", bad}, c.args...)
		code, _, errs := e2etest.Run(t, env, args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args, code, errs, c.want)
		}
	}
	e2etest.WantNothing(t, filepath.Join(bad, "*"))
}

// A step much shorter than the Prometheus server's scrape interval (1 s) has its host read
// through the server absent, saying the window was too short for how it was read, never
// figures made mostly of the time around it.
func TestStressWindowTooShortForPrometheusScrapes(t *testing.T) {
	t.Parallel()
	topo, env := sharedCluster(t)
	s := topo.Standbys()[0].Name
	ex := hostmetricstest.StartExporter(t)
	prom := hostmetricstest.StartPrometheus(t, ex.Addr)
	code, out, errs := e2etest.Run(t, env, "stress", "--cluster", topo.Name, "-q", "SELECT 1", "--threads", "1", "--iterations", "5",
		"--prometheus", prom.URL, "--prometheus-instance", s+"="+ex.Addr, "--results", t.TempDir())
	if code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, out, errs)
	}
	r := e2etest.PrintedResult(t, out)
	st := &r.Steps[0]
	sec, err := st.Hosts()
	if err != nil || sec == nil {
		t.Fatalf("hosts section: %v", err)
	}
	why := sec.Nodes[s].Absent
	if !strings.Contains(why, "is too short for how the host was read") || !strings.Contains(out, "host ("+s+"): "+why) {
		t.Errorf("a %.3f s window read through 1 s scrapes: %q\n%s", st.Window.Seconds(), why, out)
	}
	for name := range st.Counters {
		if n, _, ok := result.ParseHostName(name); ok && n == s {
			t.Errorf("figure %s of a window too short for the scrapes", name)
		}
	}
}
