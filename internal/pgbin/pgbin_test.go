package pgbin

import (
	"context"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in    string
		v     string
		major int
		ok    bool
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", "15.18", 15, true},
		{"postgres (PostgreSQL) 18.6", "18.6", 18, true},
		{"postgres (PostgreSQL) 17devel", "17", 17, true},
		{"something else", "", 0, false},
	}
	for _, c := range cases {
		v, m, err := ParseVersion(c.in)
		if (err == nil) != c.ok || v != c.v || m != c.major {
			t.Errorf("ParseVersion(%q) = %q, %d, %v", c.in, v, m, err)
		}
	}
}

func TestFindExplicitBadDir(t *testing.T) {
	_, err := Find(context.Background(), t.TempDir())
	if !agerr.IsBadInput(err) {
		t.Fatalf("want bad input for a folder without binaries, got %v", err)
	}
}

func TestFindInstalled(t *testing.T) {
	in, err := Find(context.Background(), "")
	if err != nil {
		t.Skipf("no PostgreSQL here: %v", err)
	}
	if in.Major < 13 || in.Version == "" {
		t.Fatalf("odd install %+v", in)
	}
	t.Logf("found PostgreSQL %s in %s", in.Version, in.BinDir)
}
