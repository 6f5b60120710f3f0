package commands

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agbench/agbench/e2e/e2etest"
	"github.com/agbench/agbench/internal/cluster/clustertest"
	"github.com/agbench/agbench/internal/result"
	"github.com/agbench/agbench/internal/workload/readahead"
)

func TestReadaheadPrivateServerSmallRun(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	out := t.TempDir()
	// The throttle is the machine's (the root blkio group's, per device): a run of this test
	// beside another (a second clean-clone run) may throttle the same loop device number once
	// this one detached it, so the rate is this process's own, and the line left behind is
	// told from theirs.
	iops := strconv.Itoa(5000 + os.Getpid()%997)
	code, stdout, errs := e2etest.Run(t, nil, "readahead", "--pg-bin", os.Getenv("AGBENCH_PG_BIN"), "--rows", "20000", "--repeat", "1",
		"--queries", "full,join-bitmap", "--join-ids", "200", "--throttle-iops", iops, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errs)
	}
	t.Log(stdout)
	for _, want := range []string{"full scan", "Bitmap Heap Scan", "OFF/ON", "cold:", "prefetch off:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-readahead"))
	if len(dirs) != 1 {
		t.Fatalf("result folders: %v", dirs)
	}
	r, err := result.Read(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || len(r.Steps) != 4 || r.Meta.Server == nil || r.Meta.Command != "readahead" {
		t.Fatalf("result: complete %v, %d steps, server %v", r.Complete, len(r.Steps), r.Meta.Server)
	}
	// The command's own arguments, not the process's (under `go test` or `agbench run` they differ).
	if args := strings.Join(r.Meta.Args, " "); !strings.HasPrefix(args, "readahead ") || !strings.Contains(args, "--rows 20000") || strings.Contains(args, "-test.") {
		t.Errorf("result args: %q", r.Meta.Args)
	}
	var extra readahead.RunExtra
	if err := json.Unmarshal(r.Extra[readahead.ExtraKey], &extra); err != nil {
		t.Fatal(err)
	}
	if len(extra.Table) != 2 || extra.Table[0].Off.Runs != 1 || extra.Table[0].On.Runs != 1 || extra.Conditions.ColdMethod == "" {
		t.Errorf("extra: %+v", extra)
	}
	for _, s := range r.Steps {
		if s.Counters["buffer_reads"] == 0 || s.Counters["cold"] != 1 {
			t.Errorf("step %d (%s %s): counters %v", s.Index, s.Params["query"], s.Variant, s.Counters)
		}
	}
	// The throttle is set where cgroup v1's blkio is (this machine), and removed after.
	if _, err := os.Stat("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device"); err == nil && extra.Conditions.DeviceName != "" {
		if !strings.HasPrefix(extra.Conditions.Throttle, iops+" read IOPS on "+extra.Conditions.DeviceName) {
			t.Errorf("throttle: %q", extra.Conditions.Throttle)
		}
		// The device may be reused by a concurrent run once detached; its throttle line is gone
		// unless someone set another.
		devNum, _ := os.ReadFile("/sys/block/" + extra.Conditions.DeviceName + "/dev")
		b, _ := os.ReadFile("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device")
		if line := strings.TrimSpace(string(devNum)) + " " + iops; len(devNum) > 0 && strings.Contains(string(b), line+"\n") {
			t.Errorf("throttle %q left in place: %s", line, b)
		}
	} else if extra.Conditions.Throttle == "" {
		t.Errorf("--throttle-iops given, but the conditions do not say what became of it")
	}
	if m := extra.Conditions.Mount; m != "" {
		if b, _ := os.ReadFile("/proc/mounts"); strings.Contains(string(b), m) {
			t.Errorf("%s is still mounted", m)
		}
		if _, err := os.Stat(filepath.Dir(m)); !os.IsNotExist(err) {
			t.Errorf("device folder %s is left (%v)", filepath.Dir(m), err)
		}
	}
}

func TestReadaheadOnClusterWithStandbyLeavesItAsItWas(t *testing.T) {
	t.Parallel()
	clustertest.Require(t)
	home := clustertest.Home(t)
	topo := clustertest.NewIn(t, home, clustertest.Options{Standbys: 1})
	out := t.TempDir()
	code, stdout, errs := e2etest.Run(t, map[string]string{"AGBENCH_HOME": home}, "readahead", "--cluster", topo.Name,
		"--rows", "20000", "--repeat", "1", "--queries", "full", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errs)
	}
	t.Log(stdout)
	if !strings.Contains(stdout, "device:        none: the cluster has standbys") {
		t.Errorf("no plain statement that no device was made:\n%s", stdout)
	}
	if !strings.Contains(stdout, "1/1") {
		t.Errorf("runs not cold:\n%s", stdout)
	}
	for name, up := range topo.Running() {
		if !up {
			t.Errorf("node %s is not running after readahead", name)
		}
	}
	c, err := topo.Connect(context.Background(), topo.Primary())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var dbs int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", readahead.Database).Scan(&dbs); err != nil || dbs != 0 {
		t.Errorf("experiment database left: %d (%v)", dbs, err)
	}
}
