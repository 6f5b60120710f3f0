package proc

import (
	"errors"
	"os"
	"testing"
)

func TestNetDev(t *testing.T) {
	m, err := fixture.NetDev()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != len(fixtureIfaces) {
		t.Errorf("fixture: %d interfaces, want %d", len(m), len(fixtureIfaces))
	}
	for name, want := range fixtureIfaces {
		if m[name] != want {
			t.Errorf("%s: %+v, want %+v", name, m[name], want)
		}
	}
	if _, err := rootWith(t, "stat", "").NetDev(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no /proc/net/dev: %v, want a file that does not exist", err)
	}
}

func TestParseNetDev(t *testing.T) {
	m, err := ParseNetDev([]byte("Inter-|   Receive                                                |  Transmit\n" +
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
		"    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n" +
		"  eth0: 83007397    4558    0    0    0     0          0         0   428452    4509    0    0    0     0       0          0\n"))
	if want := (NetCounters{RxBytes: 83007397, RxPackets: 4558, TxBytes: 428452, TxPackets: 4509}); err != nil || m["eth0"] != want || len(m) != 2 {
		t.Errorf("%+v, %v; want eth0 %+v of 2", m, err, want)
	}
	for _, bad := range []string{"a\nb\nlo: 1 2 3\n", "a\nb\nlo: 1 2 3 4 5 6 7 8 9 x 11 12 13 14 15 16\n",
		"a\nb\nno colon here\n", "a\nb\n : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"} {
		if m, err := ParseNetDev([]byte(bad)); err == nil {
			t.Errorf("ParseNetDev(%q) = %+v, no error", bad, m)
		}
	}
}

func TestPressure(t *testing.T) {
	for k, want := range map[string]PressureTotals{
		"cpu":    {Some: 213654782, HasFull: true},
		"io":     {Some: 16935629, Full: 11665537, HasFull: true},
		"memory": {Some: 194182, Full: 183765, HasFull: true},
	} {
		if p, err := fixture.Pressure(k); err != nil || p != want {
			t.Errorf("%s: %+v, %v; want %+v", k, p, err, want)
		}
	}
	// Before Linux 5.13, cpu has no "full" line.
	if p, err := rootWith(t, "pressure/cpu", "some avg10=1.00 avg60=0.50 avg300=0.10 total=42\n").Pressure("cpu"); err != nil || p != (PressureTotals{Some: 42}) {
		t.Errorf("some only: %+v, %v", p, err)
	}
	for _, bad := range []string{"", "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n", "some avg10=1\n", "some avg10=0.00 avg60=0.00 avg300=0.00 total=x\n"} {
		if p, err := rootWith(t, "pressure/io", bad).Pressure("io"); err == nil {
			t.Errorf("pressure %q: %+v, no error", bad, p)
		}
	}
	var unread *os.PathError
	if _, err := rootWith(t, "stat", "").Pressure("io"); !errors.As(err, &unread) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no PSI: %v, want the path error of a file that does not exist", err)
	}
}

func TestSelfRunDelay(t *testing.T) {
	if d, ok := fixture.SelfRunDelay(); !ok || d != 370572648 {
		t.Errorf("fixture: %v, %v", d, ok)
	}
	if _, ok := rootWith(t, "stat", "").SelfRunDelay(); ok {
		t.Error("no schedstat: a run delay")
	}
	if _, ok := rootWith(t, "self/task/1/schedstat", "1 x 2\n").SelfRunDelay(); ok {
		t.Error("a bad schedstat: a run delay")
	}
	if _, ok := Host.SelfRunDelay(); !ok {
		t.Skip("no schedstat on this kernel")
	}
}

// fixtureIfaces are the interfaces of testdata/root/proc/net/dev.
var fixtureIfaces = map[string]NetCounters{
	"lo":   {RxBytes: 6724129066, RxPackets: 15813333, TxBytes: 6724129066, TxPackets: 15813333},
	"ifb0": {RxBytes: 0, RxPackets: 0, TxBytes: 0, TxPackets: 0},
	"ifb1": {RxBytes: 0, RxPackets: 0, TxBytes: 0, TxPackets: 0},
	"eth0": {RxBytes: 326529198, RxPackets: 12234, TxBytes: 691528, TxPackets: 7182},
}
