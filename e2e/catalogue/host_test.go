package catalogue

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/analyze"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/proc"
	"github.com/agbench/agbench/internal/result"
)

// Catalogue cases of the verdicts about the host: other work on the machine (busy-host)
// and a load generator short of the CPU it may use (loadgen-saturated). steal cannot be
// induced from inside a VM, so it has no case here.
func init() {
	stressSelect1 := func(t *testing.T, env *catEnv, res string, threads int) []string {
		return []string{"stress", "--cluster", env.Cluster(t).Name, "--query", "SELECT 1", "--threads", strconv.Itoa(threads),
			"--iterations", "0", "--duration", "3s", "--results", res}
	}
	// The control may find the host busy for real: CI runs other packages' tests on the
	// same 2 CPUs. Its busy-host is right when the CPU used by processes that are neither
	// this test's nor the cluster's, measured from /proc over the run's measured window,
	// reached the verdict's threshold. Measured around the whole run (its start-up and
	// analysis too, a second or two beside a 3 s window), the figure was another window's
	// than the verdict's: beside a whole test suite whose CPU comes and goes by the second,
	// the window could hold 0.6 cores of other work and the run as a whole 0.45. The case
	// runs serially: the catalogue's other cases, side by side, would be other work in its
	// control's window, and its burners would be in theirs.
	var controlForeign float64
	controlMeasured := false
	addCase(catalogueCase{
		Verdict: analyze.VBusyHost,
		Name:    "stress SELECT 1 while two CPU burners run",
		Serial:  true,
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			stop := startBurners(t, 2)
			defer stop()
			res := env.Results(t)
			_, out := env.Run(t, stressSelect1(t, env, res, 1)...)
			return out, res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			res := env.Results(t)
			topo := env.Cluster(t)
			stop := watch(func() (cpuReading, bool) { return ourAndMachineCPU(topo) })
			_, out := env.Run(t, stressSelect1(t, env, res, 1)...)
			readings := stop()
			w := e2etest.ReadOneResult(t, res).Steps[0].Window
			controlForeign, controlMeasured = foreignCPUOver(readings, w.Start, w.End)
			t.Logf("other processes used %.2f cores in the control's window (measured %v)", controlForeign, controlMeasured)
			return out, res
		},
		ControlFiredOK: func() (bool, string) {
			limit := analyze.ForeignCPUThreshold(result.ReadCPUCap().MachineCPUs)
			if !controlMeasured {
				return false, "the foreign CPU could not be measured"
			}
			return controlForeign >= limit, fmt.Sprintf("other processes used %.2f cores in the control's window, measured from /proc (threshold %.2f)", controlForeign, limit)
		},
	})
	// Serially too: its 64 threads on one CPU would be other work in the windows of the
	// cases beside it, and a case beside its control would take the CPU its load generator
	// may use.
	addCase(catalogueCase{
		Verdict: analyze.VLoadGenSaturated,
		Name:    "stress SELECT 1 on 64 threads under taskset -c 0",
		Serial:  true,
		Invalid: func(t *testing.T, env *catEnv) (string, string) {
			ts, err := exec.LookPath("taskset")
			if err != nil {
				t.Skip("no taskset")
			}
			res := env.Results(t)
			cmd := exec.Command(ts, append([]string{"-c", "0", e2etest.Bin(t)}, stressSelect1(t, env, res, 64)...)...)
			cmd.Env = append(os.Environ(), "AGBENCH_HOME="+env.Home)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 2 {
					t.Fatalf("taskset -c 0 agbench stress: %v\n%s", err, out.String())
				}
			}
			return out.String(), res
		},
		Control: func(t *testing.T, env *catEnv) (string, string) {
			res := env.Results(t)
			_, out := env.Run(t, stressSelect1(t, env, res, 2)...)
			return out, res
		},
	})
}

// startBurners starts n processes that spin on a CPU, and returns what kills them.
func startBurners(t *testing.T, n int) func() {
	t.Helper()
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			stop()
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	t.Cleanup(stop)
	return stop
}

// cpuReading is the machine's busy CPU time (user, nice, system) and the CPU time of this
// test process, the agbench it runs (its children, living and reaped) and the catalogue
// cluster's servers (each postmaster and its children, living and reaped), in seconds, at
// wall time wall (seconds since boot).
type cpuReading struct{ busy, ours, wall float64 }

// foreignCPUOver is the CPU, in cores, that processes other than this test's and the
// cluster's used over the readings spanning from..to (spanning); false when none span it.
func foreignCPUOver(rs []reading[cpuReading], from, to time.Time) (float64, bool) {
	before, after, ok := spanning(rs, from, to)
	if !ok || after.v.wall <= before.v.wall {
		return 0, false
	}
	a, b := before.v, after.v
	return ((b.busy - a.busy) - (b.ours - a.ours)) / (b.wall - a.wall), true
}

// ourAndMachineCPU reads /proc; false when some part could not be read.
func ourAndMachineCPU(topo *cluster.Topology) (cpuReading, bool) {
	var r cpuReading
	stat, err := proc.Host.CPUStat()
	if err != nil {
		return r, false
	}
	r.busy = proc.Seconds(stat.All.User + stat.All.Nice + stat.All.System)
	if r.wall, err = proc.Host.Uptime(); err != nil {
		return r, false
	}
	pms := map[int]bool{}
	for _, n := range topo.Nodes {
		pid, err := os.ReadFile(filepath.Join(n.DataDir, "postmaster.pid"))
		if err != nil {
			return r, false
		}
		p, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pid), "\n", 2)[0]))
		if err != nil {
			return r, false
		}
		pms[p] = true
	}
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s, err := proc.ReadStat(proc.Root, pid)
		if err != nil {
			continue
		}
		if pid != self && s.PPID != self && !pms[pid] && !pms[s.PPID] {
			continue
		}
		r.ours += proc.Seconds(s.Ticks())
	}
	return r, true
}
