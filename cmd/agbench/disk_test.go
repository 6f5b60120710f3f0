package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agbench/agbench/internal/diskio"
	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/result"
)

func TestDiskBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	f := filepath.Join(dir, "t.dat")
	foreign := filepath.Join(dir, "mine.txt")
	os.WriteFile(foreign, []byte(strings.Repeat("x", 1<<16)), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{f, "--size", "12Q"}, "--size"},
		{[]string{f, "--size", "1M", "-b", "2M"}, "larger than --size"},
		{[]string{f, "-b", "12Q", "--qd", "0", "--write", "101"}, "--qd"},
		{[]string{f, "--sweep", "depth=1,2"}, "--sweep"},
		{[]string{f, "--qd", "1,2", "--threads", "1,2"}, "one knob"},
		{[]string{f, "--preset", "nosuch"}, "--preset"},
		{[]string{f, "--engine", "aio"}, "--engine"},
		{[]string{f, "--ios", "-1"}, "--ios"},
		{[]string{f, "--ios", "many"}, "--ios"},
		{[]string{"--ios", "100", "--", "-b4K", f}, "--ios"},
		{[]string{foreign}, "not created by agbench"},
		{[]string{"/dev/null"}, "device"},
		{[]string{dir}, "folder"},
		{[]string{f, "--size", "1000T"}, "not enough space"},
		{[]string{"--", "-b4K", "-o0", "-Zq", f}, "-o0"},
		{[]string{"--qd", "4", "--", "-b4K", f}, "--qd"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, nil, append([]string{"disk", "--results", res, "--duration", "1s"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("disk %v: exit %d, stderr %q (want 2 and %q)", c.args, code, errs, c.want)
		}
	}
	if _, err := os.Stat(res); err == nil {
		t.Error("results written on bad input")
	}
	if _, err := os.Stat(f); err == nil {
		t.Error("test file made on bad input")
	}
	if b, _ := os.ReadFile(foreign); string(b[:4]) != "xxxx" {
		t.Error("foreign file touched")
	}
}

func readDiskResult(t *testing.T, res string) *result.Result {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(res, "*-disk", "result.json"))
	if len(m) != 1 {
		t.Fatalf("result files: %v", m)
	}
	r, err := result.Read(m[0])
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(res)
	return r
}

func TestDiskSweepWritesResultAndMarks(t *testing.T) {
	if testing.Short() {
		t.Skip("does real IO")
	}
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	f := filepath.Join(dir, "t.dat")
	// Each step ends after 2000 IOs, whatever else loads the disk and CPUs; --duration only bounds it.
	code, out, errs := runCLI(t, nil, "disk", f, "--size", "8M", "-b", "4K", "--random", "--sweep", "qd=1,2,4",
		"--ios", "2000", "--duration", "2m", "--warmup", "100ms", "--results", res)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"characteristic", "\nknee ", "saturation", "dev IOPS", "L=X*W", "results: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(f); err == nil {
		t.Error("test file kept without --keep")
	}
	r := readDiskResult(t, res)
	if !r.Complete || len(r.Steps) != 3 || r.Meta.Command != "disk" {
		t.Fatalf("result: complete %v, %d steps", r.Complete, len(r.Steps))
	}
	if wl, _ := r.Meta.Config["workload"].(map[string]any); wl["ios"] != float64(2000) {
		t.Errorf("config workload %v: no ios 2000", r.Meta.Config["workload"])
	}
	for i, s := range r.Steps {
		op := s.Ops["read"]
		if op == nil || op.Count < 2000 || op.Latency.Count != op.Count || s.VUs != []int{1, 2, 4}[i] || s.Counters["iops"] <= 0 || !s.Complete {
			t.Fatalf("step %d: %+v", i, s)
		}
		// The OS sampler leaves out a window shorter than a sliver (50 ms): a fast disk can
		// end 2000 IOs sooner.
		if _, ok := s.Series["os.cpu.busy"]; !ok && s.Window.End.Sub(s.Window.Start) > 100*time.Millisecond {
			t.Errorf("step %d: no OS series (%d series)", i, len(s.Series))
		}
		if _, ok := s.Ops["write"]; ok {
			t.Errorf("step %d: a write op in a read-only run", i)
		}
	}
	var ex diskio.RunExtra
	if err := json.Unmarshal(r.Extra["disk"], &ex); err != nil || ex.Marks == nil || ex.Sweep.Key != "qd" {
		t.Fatalf("extra: %s %v", r.Extra["disk"], err)
	}
}

func TestDiskSpdSyntaxVerifyAndKeep(t *testing.T) {
	if testing.Short() {
		t.Skip("does real IO")
	}
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	f := filepath.Join(dir, "ds.dat")
	code, out, errs := runCLI(t, nil, "disk", "--results", res, "--keep", "--verify", "--", "-d1", "-W0", "-b8K", "-o4", "-t2", "-r", "-w50", "-Sh", "-L", "-c8M", f)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{"%-ile", "99.9999", "all match", "thread", "dsync"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	r := readDiskResult(t, res)
	if len(r.Steps) != 1 || r.Steps[0].Ops["write"].Count == 0 || r.Steps[0].Ops["read"].Count == 0 {
		t.Fatalf("%+v", r.Steps)
	}
	if st, err := os.Stat(f); err != nil || st.Size() != 8<<20+diskio.HeaderSize {
		t.Fatalf("--keep: %v", err)
	}
	// The kept file is reused (not re-created) and then removed only if this run made it.
	code, out, errs = runCLI(t, nil, "disk", f, "-b", "8K", "--duration", "300ms", "--warmup", "0s", "--results", res)
	if code != 0 || strings.Contains(out, "created by this run") {
		t.Fatalf("reuse: exit %d %s %s", code, errs, out)
	}
	if _, err := os.Stat(f); err != nil {
		t.Fatal("a file made by an earlier run was removed")
	}
}

// A disk run records its command line in agbench's own form (--flag=value, then FILE or
// DiskSpd's switches after --) whether its command or a study's experiment ran it.
func TestDiskRecordsItsCommandLine(t *testing.T) {
	for _, line := range [][]string{
		{"--size", "8M", "--random", "f.dat"},
		{"--keep", "--", "-b8K", "-r", "f.dat"},
	} {
		fs, build, ok := experiment.RegistryKinds([]string{"disk"})
		if !ok || fs.Parse(line) != nil {
			t.Fatalf("disk: no registered kind, or %v does not parse", line)
		}
		if _, err := build(fs.Args()); err != nil {
			t.Fatal(err)
		}
		got := kindSetup(&app{getenv: func(string) string { return "" }}, []string{"ignored"}, fs).Args
		want := map[bool][]string{true: {"disk", "--random=true", "--size=8M", "f.dat"},
			false: {"disk", "--keep=true", "--", "-b8K", "-r", "f.dat"}}[line[0] == "--size"]
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%v records %q, want %q", line, got, want)
		}
	}
}
