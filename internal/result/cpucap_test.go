package result

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3": {0, 1, 2, 3}, "0-1,4,6-7": {0, 1, 4, 6, 7}, "": nil} {
		got, err := ParseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && CPUList(got) != in {
			t.Errorf("CPUList(%v) = %q, want %q", got, CPUList(got), in)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-x"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q): no error", bad)
		}
	}
}

func TestCgroupQuota(t *testing.T) {
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// v2: the group's own cpu.max has none, its parent's allows 1.5 cores.
	v2 := t.TempDir()
	write(filepath.Join(v2, "cgroup.controllers"), "cpu io memory\n")
	write(filepath.Join(v2, "a/cpu.max"), "150000 100000\n")
	write(filepath.Join(v2, "a/b/cpu.max"), "max 100000\n")
	if q, from := CgroupQuota(v2, []byte("0::/a/b\n")); q != 1.5 || from != filepath.Join(v2, "a/cpu.max") {
		t.Errorf("v2: %v from %q", q, from)
	}
	// v1: cpu,cpuacct hierarchy with a quota of half a core; no quota is -1.
	v1 := t.TempDir()
	write(filepath.Join(v1, "cpu,cpuacct/x/cpu.cfs_quota_us"), "50000\n")
	write(filepath.Join(v1, "cpu,cpuacct/x/cpu.cfs_period_us"), "100000\n")
	write(filepath.Join(v1, "cpu,cpuacct/cpu.cfs_quota_us"), "-1\n")
	write(filepath.Join(v1, "cpu,cpuacct/cpu.cfs_period_us"), "100000\n")
	if q, _ := CgroupQuota(v1, []byte("4:memory:/x\n2:cpu,cpuacct:/x\n")); q != 0.5 {
		t.Errorf("v1: %v", q)
	}
	if q, from := CgroupQuota(v1, []byte("2:cpu,cpuacct:/\n")); q != 0 || from != "" {
		t.Errorf("v1 root: %v %q", q, from)
	}
	c := CPUCap{Affinity: []int{0, 1, 2, 3}, QuotaCores: 0.5, QuotaFrom: "cpu.max", MachineCPUs: 4}
	if c.Cores() != 0.5 || !c.Confined() || !strings.Contains(c.String(), "quota 0.5 cores") {
		t.Errorf("%v: %v %v %q", c, c.Cores(), c.Confined(), c.String())
	}
}

// The cap is what the kernel says of the process: a child of this test started under
// taskset -c 0 may use one CPU, whatever the machine has.
func TestReadCPUCapUnderTaskset(t *testing.T) {
	if os.Getenv("AGBENCH_CPUCAP_CHILD") == "1" {
		_ = json.NewEncoder(os.Stdout).Encode(ReadCPUCap())
		os.Exit(0)
	}
	own := ReadCPUCap()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			want, _ := ParseCPUList(strings.TrimSpace(v))
			if !reflect.DeepEqual(own.Affinity, want) {
				t.Errorf("affinity %v, /proc/self/status says %v", own.Affinity, want)
			}
		}
	}
	ts, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset")
	}
	cmd := exec.Command(ts, "-c", "0", os.Args[0], "-test.run", "^TestReadCPUCapUnderTaskset$")
	cmd.Env = append(os.Environ(), "AGBENCH_CPUCAP_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var c CPUCap
	if err := json.Unmarshal(out[:strings.IndexByte(string(out), '\n')+1], &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !reflect.DeepEqual(c.Affinity, []int{0}) || c.MachineCPUs != own.MachineCPUs || (c.QuotaCores == 0 || c.QuotaCores >= 1) && c.Cores() != 1 {
		t.Errorf("under taskset -c 0: %+v (cores %v)", c, c.Cores())
	}
	if own.MachineCPUs > 1 && !c.Confined() {
		t.Errorf("under taskset -c 0 on %d CPUs: not confined", own.MachineCPUs)
	}
}
