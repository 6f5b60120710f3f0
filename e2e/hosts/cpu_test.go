package hosts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cgroup"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/hostmetrics/hostmetricstest"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// The machine's CPU, saturated by the test, as agbench reads it through the exporters of
// nodes that are network namespaces of this machine, judged against the kernel's own
// /proc/stat, which the test reads itself.

// kernelMargin is the band around analyze.CPUSaturatedShare in which the test asserts no
// verdict: agbench's figure of a window is made from the exporter's reads at the window's
// open and close, the test's from its own reads (every kernelEvery) inside the window, so
// the two cover intervals a few hundred milliseconds apart; over a 6 s window, with no
// change of load at its edges (a ramp-up before each, the CPU burners started before the
// second's), they differ by far less than this.
const kernelMargin = 0.05

// kernelEvery is how often the test reads /proc/stat.
const kernelEvery = 50 * time.Millisecond

// kernelReading is /proc/stat and /proc/pressure/cpu at one moment (psi false: no PSI).
type kernelReading struct {
	at   time.Time
	stat proc.CPUStat
	some uint64 // cpu pressure's "some" total, µs
	psi  bool
}

// kernelCPU reads /proc/stat every kernelEvery until stopped.
type kernelCPU struct {
	mu       sync.Mutex
	readings []kernelReading
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// watchKernelCPU starts reading /proc/stat; it is stopped at the test's end if not before.
func watchKernelCPU(t *testing.T) *kernelCPU {
	t.Helper()
	k := &kernelCPU{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		tick := time.NewTicker(kernelEvery)
		defer tick.Stop()
		for {
			if s, err := proc.Host.CPUStat(); err == nil {
				p, perr := proc.Host.Pressure("cpu")
				k.mu.Lock()
				k.readings = append(k.readings, kernelReading{time.Now(), s, p.Some, perr == nil})
				k.mu.Unlock()
			}
			select {
			case <-k.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(k.Stop)
	return k
}

// Stop ends the reads and waits until they have; stopping twice is nothing.
func (k *kernelCPU) Stop() {
	k.once.Do(func() { close(k.stop); <-k.done })
}

// over is the machine's CPU busy share (all but idle, iowait and steal, as node_exporter's
// modes make it) between the first read at or after the window's start and the last at or
// before its end, the mean procs_running of the reads between, the share of that time some
// task waited for a CPU (-1 without PSI), and the machine's CPUs.
func (k *kernelCPU) over(w result.Window) (busy, running, pressure float64, cpus int, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var in []kernelReading
	for _, r := range k.readings {
		if !r.at.Before(w.Start) && !r.at.After(w.End) {
			in = append(in, r)
		}
	}
	if len(in) < 2 {
		return 0, 0, 0, 0, fmt.Errorf("%d reads of /proc/stat inside the window %v", len(in), w)
	}
	first, last := in[0], in[len(in)-1]
	a, b := first.stat.All, last.stat.All
	total := float64(b.Total() - a.Total())
	if total <= 0 {
		return 0, 0, 0, 0, fmt.Errorf("/proc/stat's CPU counters did not move over the window %v", w)
	}
	pressure = -1
	if first.psi && last.psi {
		pressure = min(1, float64(last.some-first.some)/float64(last.at.Sub(first.at).Microseconds()))
	}
	busy = 1 - float64((b.Idle-a.Idle)+(b.IOWait-a.IOWait)+(b.Steal-a.Steal))/total
	for _, r := range in {
		running += float64(r.stat.Running) / float64(len(in))
	}
	return busy, running, pressure, len(in[0].stat.CPUs), nil
}

// burnCPUs starts a busy loop per CPU of the machine, in a control group of the test's own
// (no limit: it keeps the loops together, so that none outlives the test), and returns what
// stops them; they are stopped at the test's end if not before.
func burnCPUs(t *testing.T, cpus int) func() {
	t.Helper()
	g := testGroup(t, cgroup.Budget{}, nil)
	var loops []*exec.Cmd
	for range cpus {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		if err := g.Start(cmd); err != nil {
			t.Fatalf("busy loop: %v", err)
		}
		loops = append(loops, cmd)
	}
	stop := sync.OnceFunc(func() {
		for _, c := range loops {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	t.Cleanup(stop)
	return stop
}

// A two-step run on a cluster whose three nodes are network namespaces of this machine,
// each node's host read through the exporter in its namespace (the cluster's topology
// names them), with a busy loop on every CPU of the machine during the second step. The
// query sleeps (pg_sleep), so 4 threads make about 4 times the throughput of 1 whatever
// the machine's CPU: the second step is the saturation point, judged against the first.
//
// The machine is shared with other test runs, so the first step may be saturated by them
// too, and the test does not assume it is quiet: it reads /proc/stat itself over each
// step's window and requires agbench's host-CPU judgement to agree with the kernel's —
// what saturated names the machine's CPU at the second step (the busy loops make the
// kernel say it is saturated there, so that side is always exercised), and says it was
// "short of CPU already" at the first step where the kernel says that step was busy at
// CPUSaturatedShare + kernelMargin with some task waiting for a CPU HostCPUPressureShare +
// kernelMargin of the time (/proc/pressure/cpu; without PSI, a run queue of 1.5 tasks per
// CPU), and not where the kernel says it was busy at most CPUSaturatedShare − kernelMargin
// or had tasks waiting at most HostCPUPressureShare − kernelMargin of the time; between the two, the
// windows' few hundred milliseconds apart could tip it either way, and nothing is asserted.
// The sentence names the one machine once, with its three nodes.
//
// Not parallel: its busy loops would take the CPU of this package's other tests.
func TestSaturatedMachineCPUOnANetnsCluster(t *testing.T) {
	hostmetricstest.Require(t, hostmetricstest.ExporterBin)
	clustertest.RequireNetns(t)
	if _, err := cgroup.Detect(); err != nil {
		t.Skipf("no control groups for the busy loops: %v", err)
	}
	env := map[string]string{"AGBENCH_HOME": clustertest.Home(t)}
	// Each node also has a CPU budget of its own (a control group): its exporter still reads
	// the machine, and the run must say so.
	if code, out, errs := e2etest.Run(t, env, "cluster", "create", "--name", "nscpu", "--netns", "--standbys", "2", "--host-cpus", "0.5",
		"--set", "fsync=off"); code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errs)
	}
	t.Cleanup(func() { e2etest.Run(t, env, "cluster", "destroy", "--name", "nscpu") })
	topo, err := cluster.Load(env["AGBENCH_HOME"], "nscpu")
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range topo.Nodes {
		nodes = append(nodes, result.SeriesNodeName(n.Name))
	}
	slices.Sort(nodes)

	kernel := watchKernelCPU(t)
	res := filepath.Join(t.TempDir(), "results")
	run := e2etest.Start(t, env, "stress", "--cluster", "nscpu", "-q", "SELECT pg_sleep(0.05)", "--threads", "1,4",
		"--iterations", "0", "--duration", "6s", "--rampup", "2s", "--results", res)
	waitSteps(t, res, 1, run)
	k, err := proc.Host.CPUStat()
	if err != nil {
		t.Fatal(err)
	}
	stopBurning := burnCPUs(t, len(k.CPUs))
	code := run.Wait(t, runLimit)
	stopBurning()
	kernel.Stop()
	out := run.Stdout.String()
	if code != 0 {
		t.Fatalf("stress: exit %d\n%s\n%s", code, out, run.Stderr)
	}
	r := e2etest.ReadOneResult(t, res)
	va := storedAnalysis(t, r)
	checkMachineCPU(t, r, va, kernel, nodes)
	if one := strings.Join(nodes[:len(nodes)-1], ", ") + " and " + nodes[len(nodes)-1] + " are on one host ("; !strings.Contains(out, "\n– "+one) ||
		!strings.Contains(out, "\n– "+va.Result.SharedHosts[0].Sentence()+"\n") {
		t.Errorf("the terminal does not say the nodes are on one host (%s):\n%s", one, out)
	}
	budget := nodes[0] + "'s exporter reads the machine's CPU and memory, not its budget's (0.5 cores): its control group's figures are the budget's"
	if !strings.Contains(out, "\n– "+budget+"\n") {
		t.Errorf("the terminal does not say %s's exporter reads the machine, not its budget:\n%s", nodes[0], out)
	}
	if !strings.Contains(va.Result.Saturated.Sentence, "; that is the machine's CPU, not a budget's: by their control groups "+nodes[0]+" used ") {
		t.Errorf("what saturated does not say the machine's CPU is not the budgets': %s", va.Result.Saturated.Sentence)
	}
	// The report says it per row: each node's host is one with the others'.
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, errs := e2etest.Run(t, env, "report", res, "-q", "-o", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"its host", "one host with " + nodes[1] + " and " + nodes[2] + " ("} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// checkMachineCPU checks the run's judgement of the machine's CPU against the kernel's
// figures over each step's window (see TestSaturatedMachineCPUOnANetnsCluster).
func checkMachineCPU(t *testing.T, r *result.Result, va analyze.VariantAnalysis, kernel *kernelCPU, nodes []string) {
	t.Helper()
	sat := va.Result.Saturated
	t.Logf("saturated: %s", sat.Sentence)
	if len(r.Steps) != 2 || len(va.Input.Evidence) != 2 {
		t.Fatalf("%d steps, %d of evidence", len(r.Steps), len(va.Input.Evidence))
	}
	short := make([]string, 2) // what the kernel says of each step: "yes", "no" or "" (the band)
	for i, st := range r.Steps {
		busy, running, pressure, cpus, err := kernel.over(st.Window)
		if err != nil {
			t.Fatal(err)
		}
		e := va.Input.Evidence[i]
		for _, h := range e.NodeHosts {
			t.Logf("step %d (%d threads, %.1f/s) %s: exporter CPU busy %s, run queue %s, CPU pressure %s; /proc/stat busy %.3f, procs_running %.1f on %d CPUs, /proc/pressure/cpu some %.3f; agbench's own /proc sampler %.3f",
				i+1, st.VUs, throughput(va, st.VUs), h.Node, fig(h.CPUBusy), fig(h.RunQueue), fig(h.CPUPressure), busy, running, cpus, pressure, e.CPUBusy)
		}
		// Short of CPU, as the analysis judges a host: busy, and tasks waiting for a CPU by
		// its pressure where the kernel has PSI (as the exporters then read it), else by
		// the run queue; each with a margin on both sides.
		waited, spare := pressure >= analyze.HostCPUPressureShare+kernelMargin, pressure >= 0 && pressure <= analyze.HostCPUPressureShare-kernelMargin
		if pressure < 0 {
			waited = running >= 1.5*float64(cpus)*analyze.HostRunQueuePerCPU
		}
		switch {
		case busy >= analyze.CPUSaturatedShare+kernelMargin && waited:
			short[i] = "yes"
		case busy <= analyze.CPUSaturatedShare-kernelMargin || spare:
			short[i] = "no"
		}
	}
	if short[1] != "yes" {
		t.Fatalf("the busy loops on every CPU did not saturate the machine at the second step, by /proc/stat: the test cannot check the verdict")
	}
	if len(va.Result.SharedHosts) != 1 || strings.Join(va.Result.SharedHosts[0].Nodes, ",") != strings.Join(nodes, ",") {
		t.Fatalf("shared hosts %+v, want one carrying %v", va.Result.SharedHosts, nodes)
	}
	machine := va.Result.SharedHosts[0].Label()
	if sat.Resource != analyze.ResHost || sat.From != float64(r.Steps[1].VUs) || !strings.Contains(sat.Sentence, machine+" CPU was") {
		t.Errorf("what saturated does not name the machine's CPU (%s) at the second step: %+v", machine, sat)
	}
	if n := strings.Count(sat.Sentence, "CPU was"); n != 1 {
		t.Errorf("the machine's CPU named %d times: %s", n, sat.Sentence)
	}
	already := strings.Contains(sat.Sentence, "short of CPU already at ")
	switch {
	case short[0] == "yes" && !already:
		t.Errorf("the kernel says the machine was short of CPU at the first step too, the sentence does not: %s", sat.Sentence)
	case short[0] == "no" && already:
		t.Errorf("the kernel says the machine had CPU to spare at the first step, the sentence says it was short: %s", sat.Sentence)
	case short[0] == "":
		t.Logf("the first step is in the band around %.0f%% busy: its clause is not judged", 100*analyze.CPUSaturatedShare)
	}
}

// throughput is the operations per second the analysis read of the step at this load.
func throughput(va analyze.VariantAnalysis, load int) float64 {
	for _, s := range va.Input.Steps {
		if s.Load == float64(load) {
			return s.Throughput
		}
	}
	return 0
}

// fig writes a figure that may be absent.
func fig(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.3f", *p)
}
