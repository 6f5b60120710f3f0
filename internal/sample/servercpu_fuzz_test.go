package sample

import "testing"

func FuzzParseProcStatCPUs(f *testing.F) {
	f.Add([]byte("cpu  1 2 3 4\ncpu0 1 2 3 4 5 6 7 8\ncpu1 1 1 1 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseProcStatCPUs(data)
		if err == nil {
			for cpu := range m {
				if cpu < 0 {
					t.Errorf("cpu %d", cpu)
				}
			}
		}
	})
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("123 4567 8\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, err := ParseSchedstat(data); err == nil && d < 0 {
			t.Errorf("negative wait %v", d)
		}
	})
}
