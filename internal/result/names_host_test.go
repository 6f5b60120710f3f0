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

func TestHostDiskNameRoundTrip(t *testing.T) {
	name := HostDiskName("db.east", "nvme0n1", DiskIOPS)
	if name != "host.db_east.disk.nvme0n1.iops" {
		t.Fatalf("HostDiskName: %q", name)
	}
	node, dev, fig, ok := ParseHostDiskName(name)
	if !ok || node != "db_east" || dev != "nvme0n1" || fig != DiskIOPS {
		t.Fatalf("ParseHostDiskName: %q %q %q %v", node, dev, fig, ok)
	}
	for _, bad := range []string{HostName("p", HostCPUBusy), "host.p.disk.", "host.p.disk.sda", "host.p.disk..iops", "disk.sda.iops"} {
		if _, _, _, ok := ParseHostDiskName(bad); ok {
			t.Errorf("ParseHostDiskName(%q) took it apart", bad)
		}
	}
}
