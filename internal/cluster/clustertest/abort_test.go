package clustertest

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/cluster"
)

// hangEnv makes TestHangWithClusters, run as a child test binary, make clusters and then
// outlive its -test.timeout.
const hangEnv = "AGBENCH_CLUSTERTEST_HANG"

// A test binary that times out (go test -timeout) exits by a panic, running no t.Cleanup and
// no TestMain code after m.Run; the clusters its tests made must not be left running.
func TestTimedOutTestBinaryLeavesNoServerRunning(t *testing.T) {
	t.Parallel()
	Require(t)
	// Making two clusters on a busy machine can take a minute; the child's timeout must leave
	// it time to make them before it fires.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHangWithClusters$", "-test.timeout=150s", "-test.v")
	// The child's folders are under one this test removes: its own cleanup never runs. A
	// short name, not t.TempDir's: a server's Unix socket path must stay under 108 bytes.
	tmp, err := os.MkdirTemp("", "agbench-hang-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil { // the servers' OS user reaches its folders
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), hangEnv+"=1", "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the hanging test binary ended with %v, want a failed exit\n%s", err, out.String())
	}
	var dirs []string
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		if _, d, ok := strings.Cut(sc.Text(), "data folder: "); ok {
			dirs = append(dirs, strings.TrimSpace(d))
		}
	}
	if len(dirs) < 3 {
		t.Fatalf("the child made %d clusters' nodes before its timeout, want a shared cluster, a cluster of its own and a hand-made one\n%s", len(dirs), out.String())
	}
	if !strings.Contains(out.String(), "timeout is near: stopping the") {
		t.Errorf("the child did not say it stopped its clusters\n%s", out.String())
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "postmaster.pid"))
		if err != nil {
			continue // stopped: PostgreSQL removes its lock file on shutdown
		}
		pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGQUIT) // what the test found still running
			t.Errorf("postmaster %d of %s still runs after its test binary timed out", pid, d)
		}
	}
}

// TestHangWithClusters is the child of TestTimedOutTestBinaryLeavesNoServerRunning: it makes
// a shared cluster, a cluster of its own and a hand-made one, then waits past the binary's
// timeout. Run alone, it does nothing.
func TestHangWithClusters(t *testing.T) {
	if os.Getenv(hangEnv) == "" {
		t.Skip("the child of TestTimedOutTestBinaryLeavesNoServerRunning")
	}
	for _, topo := range []*cluster.Topology{Shared(t, Options{}), New(t, Options{})} {
		for _, n := range topo.Nodes {
			t.Logf("data folder: %s", n.DataDir)
		}
	}
	h := NewHandmade(t, 0)
	t.Logf("data folder: %s", h.DataDir(0))
	time.Sleep(time.Hour)
}
