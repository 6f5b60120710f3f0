package proc

import (
	"net/netip"
	"testing"
)

func TestParseIPv4Routes(t *testing.T) {
	data := []byte(`Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth0	00000000	010200C0	0003	0	0	0	00000000	0	0	0
eth0	000200C0	00000000	0001	0	0	0	00FFFFFF	0	0	0
agb1	0007D50A	00000000	0001	0	0	0	00FFFFFF	0	0	0
`)
	got, err := ParseIPv4Routes(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Route{
		{"eth0", netip.MustParsePrefix("0.0.0.0/0")},
		{"eth0", netip.MustParsePrefix("192.0.2.0/24")},
		{"agb1", netip.MustParsePrefix("10.213.7.0/24")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("route %d: got %v, want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"h\neth0 0 0\n", "h\neth0 000200C0 0 0 0 0 0 00FF00FF\n", "h\neth0 0002ZZC0 0 0 0 0 0 00FFFFFF\n"} {
		if _, err := ParseIPv4Routes([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestIPv4RoutesHost reads this machine's table: it parses, and its routes are prefixes.
func TestIPv4RoutesHost(t *testing.T) {
	routes, err := Host.IPv4Routes()
	if err != nil {
		t.Skipf("no /proc/net/route here: %v", err)
	}
	for _, r := range routes {
		if r.Dest.Masked() != r.Dest {
			t.Errorf("route %v is not masked", r)
		}
	}
}
