package result

import "testing"

func TestNamesTakeApartWhatTheyBuild(t *testing.T) {
	if n := PGName("db.example", PGDatabaseBytes); n != "pg.db_example.database_bytes" {
		t.Errorf("PGName: %s", n)
	}
	if node, fig, ok := ParsePGName(PGName("db.example", PGIOReadMBps)); !ok || node != "db_example" || fig != PGIOReadMBps {
		t.Errorf("ParsePGName: %q %q %v", node, fig, ok)
	}
	if node, class, ok := ParsePGWait(PGWaitName("n1", WaitLock)); !ok || node != "n1" || class != WaitLock {
		t.Errorf("ParsePGWait: %q %q %v", node, class, ok)
	}
	if node, sb, fig, ok := ParsePGStandby(PGStandbyName("n1", "s.2", PGReplayLagSeconds)); !ok || node != "n1" || sb != "s_2" || fig != PGReplayLagSeconds {
		t.Errorf("ParsePGStandby: %q %q %q %v", node, sb, fig, ok)
	}
	if dev, fig, ok := ParseDiskName(DiskName("nvme0n1", DiskUtil)); !ok || dev != "nvme0n1" || fig != DiskUtil {
		t.Errorf("ParseDiskName: %q %q %v", dev, fig, ok)
	}
	// A standby's figures are not the node's waits, nor a node's figure a standby's.
	for _, c := range []struct {
		name                   string
		pg, wait, standby, dsk bool
	}{
		{"pg.n1.wait.lock", true, true, false, false},
		{"pg.n1.standby.s2.wait.lock", true, false, true, false},
		{"pg.n1.standby.s2.replay_lag_s", true, false, true, false},
		{"pg.n1.commits_per_s", true, false, false, false},
		{"pg.wait.cpu", true, false, false, false}, // no node: "wait" is the node, "cpu" a figure
		{"pg.n1", false, false, false, false},
		{"pg..x", false, false, false, false},
		{"pg.n1.wait.", true, false, false, false},
		{"pg.n1.standby.s2", true, false, false, false},
		{"disk.sda.await_ms", false, false, false, true},
		{"disk.sda", false, false, false, false},
		{"disk.sda.", false, false, false, false},
		{"device_iops", false, false, false, false},
		{"os.cpu.busy", false, false, false, false},
	} {
		_, _, pg := ParsePGName(c.name)
		_, _, wait := ParsePGWait(c.name)
		_, _, _, sb := ParsePGStandby(c.name)
		_, _, dsk := ParseDiskName(c.name)
		if pg != c.pg || wait != c.wait || sb != c.standby || dsk != c.dsk {
			t.Errorf("%s: pg %v wait %v standby %v disk %v", c.name, pg, wait, sb, dsk)
		}
	}
}
