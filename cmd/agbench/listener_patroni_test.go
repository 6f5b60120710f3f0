package main

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestParsePatroniURLs(t *testing.T) {
	got, err := parsePatroniURLs("http://127.0.0.1:8008, https://db2:8008/")
	if err != nil || strings.Join(got, " ") != "http://127.0.0.1:8008 https://db2:8008" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"", "127.0.0.1:8008", "ftp://h:1", "http://", "http://h:1/?x=1", "http://h:1,"} {
		if _, err := parsePatroniURLs(bad); !agerr.IsBadInput(err) {
			t.Errorf("%q: %v, want bad input", bad, err)
		}
	}
}

// FuzzParsePatroniURLs: --patroni never panics, and what it accepts are http(s) URLs.
func FuzzParsePatroniURLs(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8008", "http://a:1,https://b:2/", "%zz", "http://[::1]:8008"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		urls, err := parsePatroniURLs(s)
		if err != nil {
			return
		}
		for _, u := range urls {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				t.Fatalf("%q accepted %q", s, u)
			}
		}
	})
}
