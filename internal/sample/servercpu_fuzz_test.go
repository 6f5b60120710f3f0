package sample

import "testing"

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("123 4567 8\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, err := ParseSchedstat(data); err == nil && d < 0 {
			t.Errorf("negative wait %v", d)
		}
	})
}
