package stress

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestSplitQueries(t *testing.T) {
	in := "-- a comment\nSELECT 1;\n\nSELECT a,\n  b FROM t\n WHERE x = ';';\nSELECT 3"
	want := []string{"SELECT 1", "SELECT a,\n  b FROM t\n WHERE x = ';'", "SELECT 3"}
	if got := SplitQueries([]byte(in)); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := SplitQueries([]byte("\n-- only\n")); len(got) != 0 {
		t.Fatalf("got %q", got)
	}
}

func TestParamFile(t *testing.T) {
	p, err := ParseParamFile(strings.NewReader("# id,name\n1,alice\n2,\"b,ob\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		row := p.Next(rng, nil)
		seen[string(row[0])+"|"+string(row[1])] = true
	}
	if !seen["1|alice"] || !seen["2|b,ob"] || len(seen) != 2 {
		t.Fatalf("drew %v", seen)
	}
	for _, bad := range []string{"", "1,2\n3\n", "\"open"} {
		if _, err := ParseParamFile(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := ParseParamFile(strings.NewReader("1,2\n3\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error does not name the line: %v", err)
	}
}

func TestRange(t *testing.T) {
	r, err := ParseRange("5:7")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var buf [][]byte
	for i := 0; i < 100; i++ {
		if i%2 == 0 {
			buf = nil // a fresh draw, then one that reuses its storage
		}
		buf = r.Next(rng, buf)
		seen[string(buf[0])] = true
	}
	if !reflect.DeepEqual(seen, map[string]bool{"5": true, "6": true, "7": true}) {
		t.Fatalf("drew %v", seen)
	}
	wide := RangeParams{Lo: 1, Hi: 1 << 40}
	buf = wide.Next(rng, nil)
	if n := testing.AllocsPerRun(100, func() { buf = wide.Next(rng, buf) }); n != 0 {
		t.Fatalf("a draw into a reused buffer allocated %v times", n)
	}
	for _, bad := range []string{"7:5", "x:1", "1", "1:2:3", ""} {
		if _, err := ParseRange(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseParamFile(f *testing.F) {
	f.Add("1,a\n2,b\n")
	f.Add("#c\n\"x\"\"y\",2\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseParamFile(strings.NewReader(s))
		if err != nil {
			return
		}
		if len(p.Rows) == 0 {
			t.Fatal("no rows without an error")
		}
		p.Next(rand.New(rand.NewPCG(1, 1)), nil)
	})
}

func FuzzSplitQueries(f *testing.F) {
	f.Add("SELECT 1;\nSELECT 2;")
	f.Add("-- x\n;\n;")
	f.Fuzz(func(t *testing.T, s string) {
		for _, q := range SplitQueries([]byte(s)) {
			if strings.TrimSpace(q) == "" {
				t.Fatalf("empty query from %q", s)
			}
		}
	})
}

func FuzzParseRange(f *testing.F) {
	f.Add("1:10")
	f.Add("-9223372036854775808:9223372036854775807")
	f.Add("0:9223372036854775807")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		v := r.Next(rand.New(rand.NewPCG(1, 1)), nil)
		if len(v) != 1 {
			t.Fatal("want one value")
		}
	})
}
