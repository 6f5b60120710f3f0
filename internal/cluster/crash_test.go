package cluster

import (
	"path/filepath"
	"strings"
	"testing"
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
		err := postmasterCmdline([]byte(c.raw), bin, dir)
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
		err := postmasterCmdline(raw, bin, dir)
		first, _, _ := strings.Cut(string(raw), "\x00")
		if err == nil && (!strings.Contains(string(raw), "-D\x00") || filepath.Clean(first) != bin) {
			t.Fatalf("accepted %q", raw)
		}
	})
}
