package result

import "testing"

func TestHostNamesTakeApartWhatTheyBuild(t *testing.T) {
	if n := HostName("db.1", HostCPUCores); n != "host.db_1.cpu_cores" {
		t.Fatalf("HostName: %s", n)
	}
	if node, fig, ok := ParseHostName(HostName("primary", HostThrottledShare)); !ok || node != "primary" || fig != HostThrottledShare {
		t.Fatalf("ParseHostName: %q %q %v", node, fig, ok)
	}
	for _, bad := range []string{"host.", "host.n1", "host..x", "pg.n1.cpu_cores", "os.cpu.busy"} {
		if _, _, ok := ParseHostName(bad); ok {
			t.Errorf("%s read as a host figure", bad)
		}
	}
}
