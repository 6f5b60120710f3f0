package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/proc"
)

func TestPostmasterCmdline(t *testing.T) {
	const bin, dir = "/usr/lib/postgresql/15/bin/postgres", "/h/clusters/lab/nodes/primary"
	for _, c := range []struct {
		raw  string
		want string // "" means accepted
	}{
		{bin + "\x00-D\x00" + dir + "\x00", ""},
		{bin + "\x00-D\x00" + dir + "/\x00", ""},
		{"/usr/bin/sleep\x00100\x00", "not this cluster's"},
		{bin + "\x00-D\x00/h/clusters/lab/nodes/standby1\x00", "not the postmaster of"},
		{bin + "\x00-D\x00", "not the postmaster of"},
		{"", "not this cluster's"},
		{"\x00\x00", "not this cluster's"},
	} {
		err := postmasterCmdline(proc.ParseCmdline([]byte(c.raw)), bin, dir)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v; want %q", c.raw, err, c.want)
		}
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/h/clusters/lab/nodes/primary", "/h/clusters/lab", true},
		{"/h/clusters/lab", "/h/clusters/lab", false},
		{"/h/clusters/lab2/nodes/x", "/h/clusters/lab", false},
		{"/h/clusters/lab/../other", "/h/clusters/lab", false},
	} {
		if got := under(c.path, c.dir); got != c.want {
			t.Errorf("under(%q, %q) = %v", c.path, c.dir, got)
		}
	}
}

// FuzzPostmasterCmdline: any bytes of /proc/PID/cmdline are read without panic, and only a
// command line of the binary with -D and the folder is accepted.
func FuzzPostmasterCmdline(f *testing.F) {
	const bin, dir = "/b/postgres", "/d"
	f.Add([]byte(bin + "\x00-D\x00" + dir + "\x00"))
	f.Add([]byte("\x00"))
	f.Add([]byte("/b/postgres\x00-D"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := postmasterCmdline(proc.ParseCmdline(raw), bin, dir)
		first, _, _ := strings.Cut(string(raw), "\x00")
		if err == nil && (!strings.Contains(string(raw), "-D\x00") || filepath.Clean(first) != bin) {
			t.Fatalf("accepted %q", raw)
		}
	})
}

func TestParseWALEnd(t *testing.T) {
	for out, want := range map[string]uint64{
		"pg_waldump: error: error in WAL record at 0/3076080: invalid record length at 0/30760A8: wanted 24, got 0": 0x30760A8,
		"pg_waldump: error: error in WAL record at 1/10: record with incorrect prev-link 0/0 at 1/48":               1<<32 | 0x48,
		"pg_waldump: error: could not find a valid record after 0/30760A8":                                          0x30760A8,
		// Seen after a drill's fence: the segment of the start was made but never written.
		`pg_waldump: error: WAL segment size must be a power of two between 1 MB and 1 GB, but the WAL file "0000001C000000000000000E" header specifies 0 bytes`: 0xE000000,
	} {
		got, err := parseWALEnd(out, "0/E000000")
		if err != nil || got != want {
			t.Errorf("%q: %x, %v; want %x", out, got, err, want)
		}
	}
	if _, err := parseWALEnd("pg_waldump: error: error in WAL record at 0/3000000: invalid magic number 0000 in log segment 000000010000000000000004, offset 0", "0/3000000"); err == nil {
		t.Error("a message without the end's position was read")
	}
}

func FuzzParseWALEnd(f *testing.F) {
	f.Add("pg_waldump: error: error in WAL record at 0/3076080: invalid record length at 0/30760A8: wanted 24, got 0")
	f.Add("could not find a valid record after 0/1")
	f.Fuzz(func(t *testing.T, out string) { _, _ = parseWALEnd(out, "0/1") })
}

// WALLacked is absent, with the reason, when it cannot be measured: a received position
// that is not one, or a node the cluster does not have.
func TestWALLackedUnmeasured(t *testing.T) {
	topo := &Topology{Name: "lab"}
	if v, why := topo.WALLacked(context.Background(), "primary", "not-an-lsn"); v != nil || !strings.HasPrefix(why, "not measured: ") {
		t.Errorf("bad position: %v, %q", v, why)
	}
	if v, why := topo.WALLacked(context.Background(), "primary", "0/3000148"); v != nil || !strings.Contains(why, `no node "primary"`) {
		t.Errorf("no such node: %v, %q", v, why)
	}
}
