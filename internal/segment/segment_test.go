package segment

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Segment{"0/3": {0, 3}, "2/3": {2, 3}, " 0/1 ": {0, 1}} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"3/3": "index 3 out of range", "-1/3": "out of range", "1": "INDEX/SEGMENTS",
		"a/3": "index \"a\"", "1/b": "segments \"b\"", "0/0": "segments 0", "0/10001": "must be 1..10000"} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q): %v, want an error with %q", in, err, msg)
		}
	}
}

// TestRangesPartition checks that every split of n things into N shares covers each thing
// once, in order, with shares that differ by at most one.
func TestRangesPartition(t *testing.T) {
	t.Parallel()
	for n := 0; n <= 40; n++ {
		for of := 1; of <= 12; of++ {
			next, minC, maxC := 0, n, 0
			for i := 0; i < of; i++ {
				s := Segment{Index: i, Of: of}
				lo, hi := s.Range(n)
				if lo != next || hi < lo {
					t.Fatalf("n=%d %v: [%d,%d) after %d", n, s, lo, hi, next)
				}
				next = hi
				minC, maxC = min(minC, hi-lo), max(maxC, hi-lo)
			}
			if next != n || maxC-minC > 1 {
				t.Fatalf("n=%d of=%d: covered %d, shares %d..%d", n, of, next, minC, maxC)
			}
		}
	}
}

func TestOwnsTakesTurns(t *testing.T) {
	t.Parallel()
	const of = 3
	for k := int64(0); k < 30; k++ {
		owners := 0
		for i := 0; i < of; i++ {
			if (Segment{Index: i, Of: of}).Owns(k) {
				owners++
			}
		}
		if owners != 1 {
			t.Fatalf("operation %d has %d owners", k, owners)
		}
	}
	if !(Segment{}).Owns(7) || (Segment{}).Rate(5) != 5 || (Segment{Index: 1, Of: 4}).Rate(8) != 2 {
		t.Fatal("the whole run owns every operation at the whole rate")
	}
}

// FuzzParse checks that whatever --segment is given, Parse either refuses it or returns a
// segment inside its range that prints back as it parses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0/3", "2/3", "3/3", "-1/2", "1/0", "x", "0/10001", " 1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := Parse(v)
		if err != nil {
			return
		}
		if s.Of < 1 || s.Of > MaxOf || s.Index < 0 || s.Index >= s.Of {
			t.Fatalf("Parse(%q) = %+v out of range", v, s)
		}
		if s.Of > 1 {
			back, err := Parse(s.String())
			if err != nil || back != s {
				t.Fatalf("Parse(%q) = %+v prints %q, which parses to %+v, %v", v, s, s.String(), back, err)
			}
		}
	})
}

func TestSettingArgs(t *testing.T) {
	t.Parallel()
	got := SettingArgs([]string{"stress", "--segment", "1/3", "--threads", "3", "--results=r1", "--segments", "3", "--results", "x", "--segment=2/3", "-q", "SELECT 1"})
	want := []string{"stress", "--threads", "3", "--segments", "3", "-q", "SELECT 1"}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(got) != len(want) {
		t.Fatalf("SettingArgs = %q, want %q", got, want)
	}
}
