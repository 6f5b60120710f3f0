package proc

import (
	"errors"
	"os"
	"testing"
)

// fixture is a copy of this package's test machine's kernel files (testdata/root).
var fixture = At("testdata/root")

func TestCPUStatFixture(t *testing.T) {
	s, err := fixture.CPUStat()
	if err != nil {
		t.Fatal(err)
	}
	want := CPUTicks{User: 25045, System: 28843, Idle: 58173, IOWait: 1616, SoftIRQ: 6051, Steal: 42}
	if s.All != want || len(s.CPUs) != 2 || s.Running != 18 {
		t.Errorf("cpu %+v, %d CPUs, %d running; want %+v, 2, 18", s.All, len(s.CPUs), s.Running, want)
	}
	if c := s.CPUs[0].Add(s.CPUs[1]); c.User != 11819+13225 || c.Steal != 19+22 {
		t.Errorf("cpu0 + cpu1 = %+v", c)
	}
	if _, err := At(t.TempDir()).CPUStat(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no /proc/stat: %v, want a file that does not exist", err)
	}
}

func TestParseCPUStat(t *testing.T) {
	for _, c := range []struct {
		in   string
		all  CPUTicks
		cpus int
	}{
		{"cpu  100 0 50 800 20 5 5 20 0 0\ncpu0 50 0 25 400 10 2 3 10 0 0\ncpu1 50 0 25 400 10 3 2 10 0 0\nintr 1 2\n",
			CPUTicks{100, 0, 50, 800, 20, 5, 5, 20}, 2},
		// A 2.4-era line: four counters, the rest zero.
		{"cpu 1 2 3 4\n", CPUTicks{User: 1, Nice: 2, System: 3, Idle: 4}, 0},
		// Guest and guest_nice (fields 9 and 10) are inside user and nice already.
		{"cpu 1 2 3 4 5 6 7 8 9 10\n", CPUTicks{1, 2, 3, 4, 5, 6, 7, 8}, 0},
	} {
		s, err := ParseCPUStat([]byte(c.in))
		if err != nil || s.All != c.all || len(s.CPUs) != c.cpus {
			t.Errorf("ParseCPUStat(%q) = %+v, %v; want %+v with %d CPUs", c.in, s, err, c.all, c.cpus)
		}
	}
	if s, err := ParseCPUStat([]byte("cpu 1 2 3 4\n")); err != nil || s.Running != -1 {
		t.Errorf("no procs_running line: %+v, %v; want -1 running", s, err)
	}
	for _, bad := range []string{"", "intr 1\n", "cpu 1 2 3 4\nprocs_running x\n", "cpu 1 2 3 4\nprocs_running -2\n", "cpu 1 2 x 4 5\n", "cpu 1 2 3\n", "cpu 1 2 3 4\ncpuX 1 2 3 4\n",
		"cpu 1 2 3 4\ncpu-1 1 2 3 4\n", "cpu 1 2 3 4\ncpu0 1 2\n", "cpu 1 2 3 -4\n"} {
		if s, err := ParseCPUStat([]byte(bad)); err == nil {
			t.Errorf("ParseCPUStat(%q) = %+v, no error", bad, s)
		}
	}
}
