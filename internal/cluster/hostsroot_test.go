package cluster_test

import (
	"context"
	"github.com/agbench/agbench/internal/cgroup"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/cluster"
	"github.com/agbench/agbench/internal/cluster/clustertest"
)

// A host budget the machine cannot give is named as such, and as bad input,
// whoever runs agbench: the numbers are checked before root is asked for. As root the
// check runs again in a copy of this test binary as the user postgres.
func TestHostBudgetNamedBeforeRoot(t *testing.T) {
	if os.Getenv("AGBENCH_TEST_B9_CHILD") == "1" || os.Geteuid() != 0 {
		_, err := cluster.Create(context.Background(), cluster.CreateOptions{Name: "b9", Home: t.TempDir(),
			Commit: cluster.CommitAsync, BasePort: 20000, Host: cgroup.Budget{CPUs: 4096}})
		if !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--host-cpus 4096: this machine has") {
			t.Fatalf("as uid %d: %v; want --host-cpus 4096 named", os.Geteuid(), err)
		}
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("no user postgres to run the check as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir := clustertest.Home(t) // a folder the user postgres can reach
	bin := filepath.Join(dir, "cluster.test")
	copyFile(t, os.Args[0], bin)
	cmd := exec.Command(bin, "-test.run=^TestHostBudgetNamedBeforeRoot$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGBENCH_TEST_B9_CHILD=1", "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as postgres: %v\n%s", err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
