package hosts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/result"
)

// runLimit bounds a two-step stress run of a few seconds a step on a busy machine.
const runLimit = 3 * time.Minute

// stressArgs is a two-step stress run at a fixed rate (its load generator barely uses CPU,
// so a busy machine does not make it the bottleneck) reading each node's host from the
// exporter given.
func stressArgs(cluster, results string, hosts map[string]string) []string {
	args := []string{"stress", "--cluster", cluster, "-q", "SELECT 1", "--threads", "1,2", "--iterations", "0", "--duration", "4s",
		"--rate", "20", "--results", results}
	for node, url := range hosts {
		args = append(args, "--host-metrics", node+"="+url)
	}
	return args
}

// waitSteps waits until the run writing into results has written n steps.
func waitSteps(t *testing.T, results string, n int, run *e2etest.Proc) {
	t.Helper()
	deadline := time.Now().Add(runLimit)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(results, "*", result.FileName))
		if len(files) == 1 {
			if r, err := result.Read(files[0]); err == nil && len(r.Steps) >= n {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the run wrote no %d steps in %v\nstdout %s\nstderr %s", n, runLimit, run.Stdout, run.Stderr)
}

// reportPage is the HTML report of the run whose results are in res.
func reportPage(t *testing.T, env map[string]string, res string) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, errs := e2etest.Run(t, env, "report", res, "-q", "-o", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(html)
}

// storedAnalysis is the analysis the run stored in its result.
func storedAnalysis(t *testing.T, r *result.Result) analyze.VariantAnalysis {
	t.Helper()
	var run analyze.Run
	if err := json.Unmarshal(r.Analysis, &run); err != nil || len(run.Variants) != 1 {
		t.Fatalf("analysis: %v (%d variants)", err, len(run.Variants))
	}
	return run.Variants[0]
}

// The primary's host's device saturates from the second step (32 reads always waiting, each
// held about 100 ms by an IO limit) while the standby's host's device keeps the light IO it
// had from the start: what saturated names the primary's host's device with its figures,
// and never the standby's; both hosts are shown per step. It is named by its await and queue
// grown from the first step (about 1 ms and 0.05 to 100 ms and 20 here): on this kernel
// (6.18) a loop device's utilisation (io_ticks) reads far below what its queue says, 0.3 to
// 0.8 with reads always waiting, so the 90% rule alone would not fire. The hosts' CPU is the
// machine's for both (every exporter reads the same /proc/stat), so it is not what differs.
func TestSaturatedHostDeviceIsNamedAndItsControlIsNot(t *testing.T) {
	t.Parallel()
	hostmetricstest.Require(t, hostmetricstest.ExporterBin)
	requireDevices(t)
	topo, env := e2etest.Shared(t, clustertest.Options{Standbys: 1})
	saturatedAndControl(t, topo.Name, env, topo.Primary().Name, topo.Standbys()[0].Name)
}

// The same on a cluster whose nodes are hosts of their own (a network namespace each, with
// addresses of their own): servers on other hosts, judged on the hosts their exporters
// describe rather than "not judged".
func TestSaturatedHostDeviceOnANetnsCluster(t *testing.T) {
	t.Parallel()
	hostmetricstest.Require(t, hostmetricstest.ExporterBin)
	requireDevices(t)
	clustertest.RequireNetns(t)
	env := map[string]string{"AGBENCH_HOME": clustertest.Home(t)}
	if code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "nsh", "--netns", "--standbys", "1", "--set", "fsync=off"); code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "nsh") })
	topo, err := cluster.Load(env["AGBENCH_HOME"], "nsh")
	if err != nil {
		t.Fatal(err)
	}
	va := saturatedAndControl(t, "nsh", env, topo.Primary().Name, topo.Standbys()[0].Name)
	for _, v := range va.Result.Verdicts {
		if v.Code == analyze.VSteal && v.NotJudged {
			t.Errorf("steal not judged though each server's host was read: %s", v.Message)
		}
	}
	// The nodes' namespaces are of this machine: their postmasters are in its /proc, so
	// the servers' CPU is measured here, beside their hosts' figures from the exporters.
	for _, e := range va.Input.Evidence {
		if e.Host.Remote != "" || e.Host.ServerCPUAbsent != "" {
			t.Errorf("at %v the servers' CPU was not measured on this machine: %+v", e.Load, e.Host)
		}
	}
}

// saturatedAndControl runs a two-step stress on the cluster whose primary's host (read
// through an exporter watching only device A) saturates at the second step while the
// standby's (device B) keeps its light IO, checks what the run said of both, and returns
// its stored analysis.
func saturatedAndControl(t *testing.T, clusterName string, env map[string]string, p, s string) analyze.VariantAnalysis {
	t.Helper()
	dir := t.TempDir()
	disk, err := cgroup.DeviceOf(dir)
	if err != nil {
		t.Skipf("the test's folder is on no block device to limit: %v", err)
	}
	devA, devB := loopDevice(t, dir, "a"), loopDevice(t, dir, "b")
	exA, exB := hostmetricstest.StartExporter(t, onlyDevice(devA)...), hostmetricstest.StartExporter(t, onlyDevice(devB)...)
	slow := throttledGroup(t, disk)
	baseA, control := startFio(t, nil, devA, light), startFio(t, nil, devB, light)

	res := filepath.Join(t.TempDir(), "results")
	run := e2etest.Start(t, env, stressArgs(clusterName, res, map[string]string{p: exA.URL, s: exB.URL})...)
	waitSteps(t, res, 1, run)
	baseA.running(t)
	baseA.stop()
	hot := startFio(t, slow, devA, heavy)
	code := run.Wait(t, runLimit)
	hot.running(t)
	control.running(t)
	hot.stop()
	out := run.Stdout.String()
	if code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, out, run.Stderr)
	}
	va := storedAnalysis(t, e2etest.ReadOneResult(t, res))
	sentence := va.Result.Saturated.Sentence
	t.Logf("saturated: %s", sentence)
	if !strings.Contains(sentence, "device "+devA+" was") || va.Result.Saturated.Resource != analyze.ResHost {
		t.Errorf("the primary's host's saturated device %s is not named: %+v\n%s", devA, va.Result.Saturated, out)
	}
	if strings.Contains(sentence, devB) {
		t.Errorf("the control host's device %s is named: %s", devB, sentence)
	}
	if len(va.Input.Evidence) != 2 {
		t.Fatalf("%d steps of evidence", len(va.Input.Evidence))
	}
	for i, e := range va.Input.Evidence {
		if len(e.NodeHosts) != 2 {
			t.Errorf("step %d: hosts %+v", i, e.NodeHosts)
		}
		for _, h := range e.NodeHosts {
			if h.Device == nil {
				t.Errorf("step %d: %s's host has no device (%s)", i, h.Node, h.Why(""))
				continue
			}
			t.Logf("step %d %s: device %s %.0f IOPS, await %.2f ms, queue %.2f, util %.2f", i, h.Node, h.Device.Name, h.Device.IOPS, h.Device.AwaitMs, h.Device.Queue, h.Device.Util)
		}
	}
	for _, want := range []string{"nodes' hosts (their node_exporters), per step:", devA, devB, "saturated: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, out)
		}
	}
	// The report shows both hosts per step and charts them over time.
	html := reportPage(t, env, res)
	for _, want := range []string{"nodes&#39; hosts (their node_exporters), per step", "nodes&#39; hosts over time", devA, devB} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	return va
}

// A host whose exporter is stopped after the first step is shown absent at the second,
// with the reason its sampler recorded, on the terminal and in the stored analysis.
func TestHostLostMidRunIsAbsentWithItsReason(t *testing.T) {
	t.Parallel()
	hostmetricstest.Require(t, hostmetricstest.ExporterBin)
	topo, env := e2etest.Shared(t, clustertest.Options{Standbys: 1})
	p, s := topo.Primary().Name, topo.Standbys()[0].Name
	exA, exB := hostmetricstest.StartExporter(t), hostmetricstest.StartExporter(t)
	res := filepath.Join(t.TempDir(), "results")
	run := e2etest.Start(t, env, stressArgs(topo.Name, res, map[string]string{p: exA.URL, s: exB.URL})...)
	waitSteps(t, res, 1, run)
	exB.Stop()
	if code := run.Wait(t, runLimit); code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, run.Stdout, run.Stderr)
	}
	out := run.Stdout.String()
	r := e2etest.ReadOneResult(t, res)
	sec, err := r.Steps[1].Hosts()
	if err != nil || sec == nil || sec.Nodes[s].Absent == "" {
		t.Fatalf("the second step's hosts section: %+v %v", sec, err)
	}
	why := sec.Nodes[s].Absent
	if !strings.Contains(out, "host ("+s+"): "+why) && !strings.Contains(out, s+"'s host: "+why) {
		t.Errorf("the terminal does not say why %s's host is absent (%s):\n%s", s, why, out)
	}
	va := storedAnalysis(t, r)
	hs := va.Input.Evidence[1].NodeHosts
	for _, h := range hs {
		if h.Node == result.SeriesNodeName(s) && (h.Measured() || h.Absent != why) {
			t.Errorf("%s's host at the second step: %+v", s, h)
		}
		if h.Node == result.SeriesNodeName(p) && !h.Measured() {
			t.Errorf("%s's host was read throughout: %+v", p, h)
		}
	}
}
