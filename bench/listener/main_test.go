package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseLists(t *testing.T) {
	clients, paths, err := parseLists("1 8,32", "direct, haproxy")
	if err != nil || !slices.Equal(clients, []int{1, 8, 32}) || !slices.Equal(paths, []string{"direct", "haproxy"}) {
		t.Fatalf("%v %v %v", clients, paths, err)
	}
	for _, c := range []struct{ clients, paths, want string }{
		{"1 x", "direct", "-clients"}, {"0", "direct", "-clients"}, {"1", "direct pgpool", `unknown path "pgpool"`}, {"", "direct", "at least one"},
	} {
		if _, _, err := parseLists(c.clients, c.paths); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want %q", c.clients, c.paths, err, c.want)
		}
	}
}

// The verdict needs the listener at 0.75x direct and ahead of both proxies measured.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		perRound map[string]float64
		want     string
	}{
		{map[string]float64{"8/agbench": 0.8, "8/pgbouncer": 0.6, "8/haproxy": 0.7, "32/agbench": 0.9}, "8:met 32:met"},
		{map[string]float64{"8/agbench": 0.8, "8/haproxy": 0.85}, "8:missed"},
		{map[string]float64{"8/agbench": 0.7}, "8:missed"},
	} {
		if got := verdictWords(c.perRound); got != c.want {
			t.Errorf("%v: %q, want %q", c.perRound, got, c.want)
		}
	}
}
