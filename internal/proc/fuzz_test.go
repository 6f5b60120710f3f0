package proc

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseStat feeds any bytes: no panic, and what parses writes back (line) to a line
// that parses to the same (the name taken from the first '(' to the last ')').
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (postgres: walsender (x) 127.0.0.1(5) streaming) S 1 2 3 0 -1 4194560 100 0 0 0 250 75 10 5 20 0 1 0 100 0 0\n"))
	f.Add([]byte("1 ((x)) S"))
	f.Add([]byte("1 (a) b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStat(data)
		if err != nil {
			return
		}
		if s.PID < 0 || s.PPID < 0 {
			t.Fatalf("%q parsed to %+v", data, s)
		}
		again, err := ParseStat([]byte(line(s)))
		if err != nil || again != s {
			t.Fatalf("%q parsed to %+v, which writes back to %q, parsed to %+v (%v)", data, s, line(s), again, err)
		}
	})
}

// FuzzStatComm writes lines with any command name the kernel could show (up to 15 bytes,
// no NUL) and reads them back: the name, and every field after it, come back whole.
func FuzzStatComm(f *testing.F) {
	f.Add("postgres", uint64(250), int64(-1))
	f.Add("a) S 1 (b", uint64(0), int64(7))
	f.Add(") ) )", uint64(1), int64(0))
	f.Fuzz(func(t *testing.T, comm string, ticks uint64, reaped int64) {
		if len(comm) > 15 || bytes.IndexByte([]byte(comm), 0) >= 0 {
			return
		}
		want := Stat{PID: 12, Comm: comm, State: 'S', PPID: 3, UTime: ticks, STime: ticks / 2, CUTime: reaped, CSTime: reaped, StartTime: ticks + 1}
		got, err := ParseStat([]byte(line(want)))
		if err != nil || got != want {
			t.Fatalf("comm %q: %+v, %v; want %+v", comm, got, err, want)
		}
	})
}

// FuzzParseCPUStat: no panic, and a reading that parses writes back (cpuLines) to lines
// that parse to the same, procs_running included.
func FuzzParseCPUStat(f *testing.F) {
	f.Add(mustRead(f, fixture.Proc("stat")))
	f.Add([]byte("cpu  100 0 50 800 20 5 5 20 0 0\ncpu0 50 0 25 400 10 2 3 10 0 0\n"))
	f.Add([]byte("cpu 1 2 3 4 5\n"))
	f.Add([]byte("cpu 1 2 3 4 5\nprocs_running 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCPUStat(data)
		if err != nil {
			return
		}
		again, err := ParseCPUStat([]byte(cpuLines(s)))
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%q parsed to %+v, which writes back to %q, parsed to %+v (%v)", data, s, cpuLines(s), again, err)
		}
	})
}

// cpuLines writes s as the kernel writes the cpu lines of /proc/stat.
func cpuLines(s CPUStat) string {
	line := func(name string, c CPUTicks) string {
		return fmt.Sprintf("%s %d %d %d %d %d %d %d %d 0 0\n", name, c.User, c.Nice, c.System, c.Idle, c.IOWait, c.IRQ, c.SoftIRQ, c.Steal)
	}
	out := line("cpu", s.All)
	for cpu, c := range s.CPUs {
		out += line(fmt.Sprint("cpu", cpu), c)
	}
	if s.Running >= 0 {
		out += fmt.Sprintf("procs_running %d\n", s.Running)
	}
	return out
}

// mustRead reads a fixture, the seed of a fuzz target.
func mustRead(f *testing.F, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzParseInflight: no panic, and what parses writes back as the kernel writes it to
// the same counts.
func FuzzParseInflight(f *testing.F) {
	f.Add(mustRead(f, fixture.Sys("block", "vda", "inflight")))
	f.Add([]byte("3 7\n"))
	f.Add([]byte("-1 0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, w, err := ParseInflight(data)
		if err != nil {
			return
		}
		line := fmt.Sprintf("%8d %8d\n", r, w)
		r2, w2, err := ParseInflight([]byte(line))
		if err != nil || r2 != r || w2 != w || r < 0 || w < 0 {
			t.Fatalf("%q parsed to %d %d, which writes back to %q, parsed to %d %d (%v)", data, r, w, line, r2, w2, err)
		}
	})
}

// FuzzParseNetDev: no panic, and what parses has named interfaces only.
func FuzzParseNetDev(f *testing.F) {
	f.Add(mustRead(f, fixture.Proc("net", "dev")))
	f.Add([]byte("h\nh\nlo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"))
	f.Add([]byte("h\nh\nlo: 1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseNetDev(data)
		if err != nil {
			return
		}
		for name := range m {
			if name == "" {
				t.Fatalf("%q: an empty interface name", data)
			}
		}
	})
}

// FuzzParseCgroupStat: no panic, and every key is one word of a line.
func FuzzParseCgroupStat(f *testing.F) {
	f.Add(mustRead(f, fixture.Sys("fs", "cgroup", "memory", "memory.stat")))
	f.Add(mustRead(f, fixture.Sys("fs", "cgroup", "unified", "cpu.stat")))
	f.Fuzz(func(t *testing.T, data []byte) {
		for k := range ParseCgroupStat(data) {
			if k == "" || strings.ContainsAny(k, " \n") {
				t.Fatalf("%q: key %q", data, k)
			}
		}
	})
}

// FuzzParseCgroupIO: no panic in either format's parser, and counters of another device
// never leak into the one asked for.
func FuzzParseCgroupIO(f *testing.F) {
	f.Add(mustRead(f, fixture.Sys("fs", "cgroup", "blkio", "blkio.throttle.io_service_bytes")))
	f.Add(mustRead(f, fixture.Sys("fs", "cgroup", "unified", "node", "io.stat")))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, w := ParseBlkioThrottle(data, "1:2"); !bytes.Contains(data, []byte("1:2")) && (r != 0 || w != 0) {
			t.Fatalf("%q: 1:2 read %d wrote %d", data, r, w)
		}
		if c := ParseIOStat(data, "1:2"); !bytes.Contains(data, []byte("1:2")) && c != (CgroupIO{}) {
			t.Fatalf("%q: 1:2 %+v", data, c)
		}
	})
}

// FuzzParseCPUMax: a quota that parses is a positive number of cores.
func FuzzParseCPUMax(f *testing.F) {
	f.Add(mustRead(f, fixture.Sys("fs", "cgroup", "unified", "node", "cpu.max")))
	for _, s := range []string{"max 100000", "50000 100000", "1e400 1", "5 0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if q, ok := ParseCPUMax(data); ok && !(q > 0) {
			t.Fatalf("%q: quota %v", data, q)
		}
	})
}

// FuzzParseMountinfo: no panic, and every mount it returns has a file system type.
func FuzzParseMountinfo(f *testing.F) {
	f.Add(mustRead(f, fixture.Proc("self", "mountinfo")))
	f.Add([]byte(`36 35 98:0 /mnt1 /a\040b rw,noatime master:1 - ext3 /dev/my\040disk rw` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseMountinfo(data)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.FSType == "" || len(m.SuperOptions) == 0 {
				t.Fatalf("%q: %+v", data, m)
			}
		}
	})
}

// FuzzParseIPv4Routes feeds any bytes: no panic, and every route parsed is a valid, masked
// prefix (its address has no bits beyond its length).
func FuzzParseIPv4Routes(f *testing.F) {
	f.Add([]byte("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\neth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\neth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"))
	f.Add([]byte("h\nx 0000000 0 0 0 0 0 FFFFFFFF\n"))
	f.Add([]byte("h\nx 000000GG 0 0 0 0 0 00FF00FF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		routes, err := ParseIPv4Routes(data)
		if err != nil {
			return
		}
		for _, r := range routes {
			if !r.Dest.IsValid() || !r.Dest.Addr().Is4() || r.Dest.Masked() != r.Dest {
				t.Fatalf("%q parsed to route %+v", data, r)
			}
		}
	})
}

func FuzzParseTCPConns(f *testing.F) {
	f.Add([]byte("  sl  local_address rem_address   st tx_queue\n   0: 0100007F:1538 0100007F:D2F0 01 00000000:00000000\n"))
	f.Add([]byte("h\n 0: 00000000000000000000000001000000:1538 0000000000000000FFFF00000100007F:9C40 01 0\n"))
	f.Add([]byte("h\n 0: 0100007F 0100007F:1 01\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		conns, err := ParseTCPConns(data)
		if err != nil {
			return
		}
		for _, c := range conns {
			if !c.Local.IsValid() || !c.Remote.IsValid() {
				t.Fatalf("%q parsed to %+v", data, c)
			}
		}
	})
}
