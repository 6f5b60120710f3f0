package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// line writes s as the kernel writes /proc/<pid>/stat (the fields agbench does not keep
// with made-up values).
func line(s Stat) string {
	return fmt.Sprintf("%d (%s) %c %d 4242 4242 0 -1 4194560 100 0 0 0 %d %d %d %d 20 0 1 0 %d 1000 10 0 0\n",
		s.PID, s.Comm, s.State, s.PPID, s.UTime, s.STime, s.CUTime, s.CSTime, s.StartTime)
}

func TestParseStat(t *testing.T) {
	for _, want := range []Stat{
		{PID: 4242, Comm: "postgres", State: 'S', PPID: 17, UTime: 250, STime: 75, CUTime: 10, CSTime: 5, StartTime: 98765},
		// A name with spaces and parentheses: it ends at the last ')'.
		{PID: 7, Comm: "post gres) (x) S 1 2", State: 'Z', PPID: 1, UTime: 1, CUTime: -1, StartTime: 5},
		{PID: 1, Comm: "", State: 'T', PPID: 0},
		{PID: 9, Comm: "((", State: 'R', PPID: 2, UTime: 1 << 40},
	} {
		got, err := ParseStat([]byte(line(want)))
		if err != nil || got != want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v", line(want), got, err, want)
		}
	}
	s := Stat{UTime: 250, STime: 75, CUTime: 10, CSTime: -1}
	if s.OwnTicks() != 325 || s.ReapedTicks() != 10 || s.Ticks() != 335 || Seconds(s.Ticks()) != 3.35 {
		t.Errorf("ticks of %+v: own %d reaped %d all %d", s, s.OwnTicks(), s.ReapedTicks(), s.Ticks())
	}
	if !(Stat{State: 'Z'}).Zombie() || (Stat{State: 'S'}).Zombie() {
		t.Error("Zombie")
	}
	for _, bad := range []string{
		"",
		"1 (x S 1",
		"1 (x) S 1 2",
		"x (x) S 1 2 3 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5",
		"1 (x) S a 2 3 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5",
		"1 (x) S -2 2 3 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5",
		"1 (x) SS 1 2 3 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5",
		"1 (x) S 1 2 3 0 -1 0 0 0 0 0 -1 1 0 0 20 0 1 0 5",
		"1 (x) S 1 2 3 0 -1 0 0 0 0 0 1 1 z 0 20 0 1 0 5",
		"1 (x) S 1 2 3 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 -5",
		") 1 (x S 1 2 3 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5",
	} {
		if s, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) = %+v, no error", bad, s)
		}
	}
}

// ReadStat and Children on the real /proc: this test's process has a child it started,
// listed with its name and parent, and its own line reads back its pid.
func TestReadStatAndChildren(t *testing.T) {
	self, err := ReadStat(Root, os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if self.PID != os.Getpid() || self.PPID != os.Getppid() || self.Zombie() {
		t.Fatalf("own stat %+v", self)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	kids, err := Children(Root, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(kids, func(s Stat) bool { return s.PID == child.Process.Pid })
	if i < 0 || kids[i].PPID != os.Getpid() {
		t.Fatalf("children of %d: %+v; want %d among them", os.Getpid(), kids, child.Process.Pid)
	}
	if _, err := ReadStat(Root, -1); err == nil {
		t.Error("ReadStat of pid -1: no error")
	}
}

// Children under a copy of /proc: entries that are not processes, lines that do not parse
// and other parents' children are left out.
func TestChildrenOfACopy(t *testing.T) {
	root := t.TempDir()
	for pid, text := range map[int]string{
		10: line(Stat{PID: 10, Comm: "postgres", State: 'S', PPID: 1}),
		11: line(Stat{PID: 11, Comm: "postgres: walwriter", State: 'S', PPID: 10}),
		12: line(Stat{PID: 12, Comm: "other", State: 'S', PPID: 3}),
		13: "13 (broken",
		14: line(Stat{PID: 14, Comm: "postgres: 1 (x)", State: 'Z', PPID: 10}),
	} {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	kids, err := Children(root, 10)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, k := range kids {
		pids = append(pids, k.PID)
	}
	slices.Sort(pids)
	if !slices.Equal(pids, []int{11, 14}) {
		t.Fatalf("children of 10: %v; want [11 14]", pids)
	}
	if _, err := Children(filepath.Join(root, "none"), 10); err == nil {
		t.Error("Children of a missing root: no error")
	}
}

func TestCmdline(t *testing.T) {
	for raw, want := range map[string][]string{
		"postgres\x00-D\x00/d\x00": {"postgres", "-D", "/d"},
		"postgres: walwriter":      {"postgres: walwriter"}, // a process title has no NULs
		"":                         {""},
		"a\x00\x00b\x00":           {"a", "", "b"},
	} {
		if got := ParseCmdline([]byte(raw)); !slices.Equal(got, want) {
			t.Errorf("ParseCmdline(%q) = %q; want %q", raw, got, want)
		}
	}
	args, err := Cmdline(Root, os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if len(args) == 0 || filepath.Base(args[0]) != filepath.Base(os.Args[0]) {
		t.Errorf("own command line %q; os.Args %q", args, os.Args)
	}
}
