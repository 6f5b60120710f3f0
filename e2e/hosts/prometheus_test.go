package hosts

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/result"
)

// The figures a node's host must have at every step it was read, through Prometheus as
// directly: CPU by mode, run queue, memory and page cache, network (and devices, checked
// apart).
var hostFigures = []string{result.HostCPUBusy, result.HostCPUIOWait, result.HostCPUSteal, result.HostRunQueue, result.HostCPUs,
	result.HostMemAvailable, result.HostMemPageCache, result.HostNetRxBPS, result.HostNetTxBPS, result.HostNetErrors}

// A cluster whose nodes are hosts of their own (a network namespace each, its node_exporter
// at its address), scraped every second by a real Prometheus server in the root namespace
// over the cluster's bridge, and read only through it (--prometheus; each node's series
// named by its topology's exporter address). A scan run, then a two-step stress run: every
// node's host figures per step as host.<node>.* series and window figures, the table and
// the report naming the server and each node's series; each figure that Prometheus's
// scrapes gave is the one the exporter's counters give between those scrapes, read by the
// test itself at the same time (compareWithDirect). The standby's exporter is stopped
// (by its recorded pid) once the first step is written: at the second step its host is
// absent, with the server's failed scrape as the reason, and the primary's stays measured.
func TestNetnsHostsThroughPrometheus(t *testing.T) {
	t.Parallel()
	hostmetricstest.Require(t, hostmetricstest.ExporterBin)
	hostmetricstest.Require(t, hostmetricstest.PrometheusBin)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("no fio")
	}
	clustertest.RequireNetns(t)
	env := map[string]string{"AGBENCH_HOME": clustertest.Home(t)}
	if code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "nsprom", "--netns", "--standbys", "1", "--set", "fsync=off"); code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "nsprom") })
	topo, err := cluster.Load(env["AGBENCH_HOME"], "nsprom")
	if err != nil {
		t.Fatal(err)
	}
	p, s := topo.Primary(), topo.Standbys()[0]
	// IO of the test's own on the disk under its folder, which every exporter of this
	// machine reports (they leave loop devices out).
	startFioOn(t, nil, filepath.Join(t.TempDir(), "io"), light).running(t)
	// The test's own reads begin before the server's scrapes, so that each scrape has one
	// of them before it.
	readers := map[string]*directReader{p.Name: readDirectly(t, p.HostMetrics), s.Name: readDirectly(t, s.HostMetrics)}
	for _, r := range readers {
		r.waitFirst(t)
	}
	prom := hostmetricstest.StartPrometheus(t, p.Exporter.Listen, s.Exporter.Listen)

	scanRes := filepath.Join(t.TempDir(), "scan")
	code, out, errs := e2etest.Run(t, env, "scan", "--cluster", "nsprom", "--table", "promscan", "--init", "2000", "--rows", "2000",
		"--duration", "3s", "--prometheus", prom.URL, "--results", scanRes)
	if code != 0 {
		t.Fatalf("scan: exit %d\n%s\n%s", code, out, errs)
	}
	scan := e2etest.ReadOneResult(t, scanRes)
	checkMeasured(t, "scan", &scan.Steps[0], prom.URL, map[string]string{p.Name: p.Exporter.Listen, s.Name: s.Exporter.Listen})

	res := filepath.Join(t.TempDir(), "results")
	run := e2etest.Start(t, env, "stress", "--cluster", "nsprom", "-q", "SELECT 1", "--threads", "1,2", "--iterations", "0",
		"--duration", "4s", "--rate", "20", "--prometheus", prom.URL, "--results", res)
	waitSteps(t, res, 1, run)
	// The test reads the standby's exporter once after the first step's last scrape ended
	// (within its 1 s timeout) before stopping it, to compare that step's figures.
	first := e2etest.ReadOneResult(t, res)
	if sec, err := first.Steps[0].Hosts(); err == nil && sec != nil && sec.Nodes[s.Name].Span != nil {
		readers[s.Name].waitReadAfter(t, sec.Nodes[s.Name].Span.End.Add(time.Second+scrapeTolerance))
	}
	if err := topo.StopExporter(s.Name); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if code := run.Wait(t, runLimit); code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, run.Stdout, run.Stderr)
	}
	out = run.Stdout.String()
	r := e2etest.ReadOneResult(t, res)
	if len(r.Steps) != 2 {
		t.Fatalf("%d steps", len(r.Steps))
	}
	checkMeasured(t, "stress step 1", &r.Steps[0], prom.URL, map[string]string{p.Name: p.Exporter.Listen, s.Name: s.Exporter.Listen})
	checkMeasured(t, "stress step 2", &r.Steps[1], prom.URL, map[string]string{p.Name: p.Exporter.Listen})
	checkLost(t, &r.Steps[1], s.Name, s.Exporter.Listen, stopped, out)
	// The analysis has the standby's host absent at the second step with that reason, the
	// primary's measured.
	lost, _ := r.Steps[1].Hosts()
	for _, h := range storedAnalysis(t, r).Input.Evidence[1].NodeHosts {
		switch h.Node {
		case result.SeriesNodeName(s.Name):
			if h.Measured() || h.Absent != lost.Nodes[s.Name].Absent {
				t.Errorf("the analysis has %s's host at the second step as %+v", s.Name, h)
			}
		case result.SeriesNodeName(p.Name):
			if !h.Measured() {
				t.Errorf("the analysis has %s's host unmeasured at the second step: %s", p.Name, h.Why(""))
			}
		}
	}

	// And the primary's once after the run's last scrape of it ended.
	if sec, err := r.Steps[1].Hosts(); err == nil && sec != nil && sec.Nodes[p.Name].Span != nil {
		readers[p.Name].waitReadAfter(t, sec.Nodes[p.Name].Span.End.Add(time.Second+scrapeTolerance))
	}
	scrapes := scrapesOf(t, prom.URL)
	for _, c := range []struct {
		what string
		st   *result.Step
		node string
	}{{"scan", &scan.Steps[0], p.Name}, {"scan", &scan.Steps[0], s.Name}, {"stress step 1", &r.Steps[0], p.Name},
		{"stress step 1", &r.Steps[0], s.Name}, {"stress step 2", &r.Steps[1], p.Name}} {
		addr := p.Exporter.Listen
		if c.node == s.Name {
			addr = s.Exporter.Listen
		}
		compareWithDirect(t, c.what, c.st, c.node, scrapes[addr], readers[c.node].stop())
	}

	through := "nodes' hosts (their node_exporters, through the Prometheus server " + prom.URL + "), per step"
	for _, want := range []string{through + ":", p.Name + ` instance="` + p.Exporter.Listen + `"`, s.Name + ` instance="` + s.Exporter.Listen + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, out)
		}
	}
	html := reportPage(t, env, res)
	for _, want := range []string{strings.ReplaceAll(through, "'", "&#39;"), "instance=&#34;" + s.Exporter.Listen + "&#34;", "up 0"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// checkMeasured checks that each node's (by name, its series' instance) host was read in
// the step through the server at url, with every figure and the device's as window figures
// and per-second series.
func checkMeasured(t *testing.T, what string, st *result.Step, url string, nodes map[string]string) {
	t.Helper()
	sec, err := st.Hosts()
	if err != nil || sec == nil {
		t.Fatalf("%s: hosts section %v", what, err)
	}
	for node, addr := range nodes {
		src := sec.Nodes[node]
		if want := url + ` instance="` + addr + `"`; src.Source != want || src.Absent != "" || src.Span == nil {
			t.Errorf("%s: %s's host: %+v; want read through %s", what, node, src, want)
			continue
		}
		// The scrapes the figures are made of are the last before the window's open and the
		// first after its close.
		if src.Span.Start.After(st.Window.Start) || src.Span.End.Before(st.Window.End) {
			t.Errorf("%s: %s's figures span %v..%v, not the window %v..%v", what, node, src.Span.Start, src.Span.End, st.Window.Start, st.Window.End)
		}
		for _, fig := range hostFigures {
			name := result.HostName(node, fig)
			if _, ok := st.Counters[name]; !ok {
				t.Errorf("%s: no %s (%s)", what, name, src.Why(fig))
			}
			if fig != result.HostCPUs && len(st.Series[name].T) == 0 {
				t.Errorf("%s: no series %s", what, name)
			}
		}
		devices := 0
		for name := range st.Counters {
			n, dev, fig, ok := result.ParseHostDiskName(name)
			if !ok || n != node || fig != result.DiskIOPS {
				continue
			}
			devices++
			for _, fig := range []string{result.DiskReadMBps, result.DiskWriteMBps, result.DiskAwaitMs, result.DiskQueue, result.DiskUtil} {
				dn := result.HostDiskName(node, dev, fig)
				if _, ok := st.Counters[dn]; !ok || len(st.Series[dn].T) == 0 {
					t.Errorf("%s: %s's device %s has IOPS but no %s figure or series", what, node, dev, fig)
				}
			}
		}
		if devices == 0 {
			t.Errorf("%s: no device figures of %s's host", what, node)
		}
	}
}

// checkLost checks that node's host, whose exporter at addr was stopped, is absent from the
// step with the server's failed scrape as the reason, naming the series, in the result and
// on the terminal; none of its figures is in the step, nor a point of its series after the
// exporter stopped.
func checkLost(t *testing.T, st *result.Step, node, addr string, stopped time.Time, out string) {
	t.Helper()
	sec, _ := st.Hosts()
	why := sec.Nodes[node].Absent
	t.Logf("%s's host at the second step: %s", node, why)
	for _, want := range []string{`Prometheus's scrape of instance="` + addr + `"`, "failed (up 0)", "connection refused"} {
		if !strings.Contains(why, want) {
			t.Errorf("%s's host is absent with %q; want it to say %q", node, why, want)
		}
	}
	if why != "" && !strings.Contains(out, node+"'s host: "+why) && !strings.Contains(out, "host ("+node+"): "+why) {
		t.Errorf("the terminal does not say why %s's host is absent (%s):\n%s", node, why, out)
	}
	for name := range st.Counters {
		if n, _, ok := result.ParseHostName(name); ok && n == node {
			t.Errorf("figure %s = %v of a host whose exporter was stopped", name, st.Counters[name])
		}
	}
	// A point of the series is the interval up to a scrape that worked: none is of a scrape
	// after the exporter's end.
	for name, s := range st.Series {
		if n, _, ok := result.ParseHostName(name); ok && n == node && len(s.T) > 0 {
			if last := s.Start.Add(time.Duration(s.T[len(s.T)-1] * float64(time.Second))); last.After(stopped) {
				t.Errorf("series %s has a point at %v, after its exporter stopped at %v", name, last, stopped)
			}
		}
	}
}
