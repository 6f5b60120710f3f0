package sample

import "testing"

func FuzzParseDiskstats(f *testing.F) {
	f.Add([]byte(diskstatsNew))
	f.Add([]byte("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"))
	f.Add([]byte("8 0 sda 1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseDiskstats(data)
		if err != nil {
			return
		}
		for name, c := range m {
			if name == "" || c.Name != name {
				t.Fatalf("device keyed %q holds %q", name, c.Name)
			}
			r := DiskDelta(DiskCounters{}, c, 1)
			if r.Util < 0 || r.Util > 1 || r.AvgQueue < 0 || r.AwaitMs < 0 {
				t.Fatalf("rates out of range: %+v", r)
			}
		}
	})
}

func FuzzParsePressure(f *testing.F) {
	f.Add([]byte("some avg10=0.00 avg60=0.11 avg300=0.95 total=8461908\nfull avg10=0.00 avg60=0.10 avg300=0.91 total=8261183\n"))
	f.Add([]byte("some avg10=1.00 total=42\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePressure(data)
		if err != nil {
			return
		}
		s := PressureDelta(PressureTotals{}, p, 1)
		if s.Some < 0 || s.Some > 1 || s.Full < 0 || s.Full > 1 {
			t.Fatalf("shares out of range: %+v", s)
		}
	})
}

func FuzzParseNetDev(f *testing.F) {
	f.Add([]byte(netDev))
	f.Add([]byte("h\nh\nlo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseNetDev(data)
		if err != nil {
			return
		}
		for name := range m {
			if name == "" {
				t.Fatal("empty interface name accepted")
			}
		}
	})
}
