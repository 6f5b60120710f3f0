package result

import "testing"

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-3,6", "", "3-1", "0-65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i := 1; i < len(cpus); i++ {
			if cpus[i] < 0 {
				t.Fatalf("%q: %v", s, cpus)
			}
		}
	})
}
