package target

import (
	"strings"
	"testing"

	"github.com/agbench/agbench/internal/agerr"
)

func TestResolveBadInput(t *testing.T) {
	home := t.TempDir()
	cases := []struct {
		spec Spec
		want []string
	}{
		{Spec{}, []string{"no target"}},
		{Spec{Cluster: "lab", Primary: "host=a"}, []string{"one or the other"}},
		{Spec{Primary: "host=a port=notaport password=hunter2"}, []string{"--primary", "xxxxx"}},
		{Spec{Primary: "host=a", Standbys: []string{"port=x"}}, []string{"--standby"}},
		{Spec{Cluster: "nosuch"}, []string{"nosuch"}},
	}
	for _, c := range cases {
		_, err := Resolve(home, c.spec)
		if !agerr.IsBadInput(err) {
			t.Errorf("%+v: %v is not bad input", c.spec, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q lacks %q", c.spec, err, w)
			}
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("password in error: %v", err)
		}
	}
}

func TestConnStringByIntent(t *testing.T) {
	tg, err := Resolve(t.TempDir(), Spec{Primary: "host=p", Standbys: []string{"host=s1", "host=s2"}})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{tg.ConnString(ReadWrite, 0), tg.ConnString(ReadOnly, 0), tg.ConnString(ReadOnly, 1), tg.ConnString(ReadOnly, 2)}
	if strings.Join(got, ",") != "host=p,host=s1,host=s2,host=s1" {
		t.Fatalf("got %v", got)
	}
	tg.Listener = "host=l"
	if cs := tg.ConnString(ReadOnly, 0); cs != "host=l agbench.intent=read-only" {
		t.Fatalf("listener read-only: %q", cs)
	}
	if cs := WithIntent("postgres://l/db?sslmode=disable", ReadOnly); cs != "postgres://l/db?sslmode=disable&agbench.intent=read-only" {
		t.Fatalf("URL: %q", cs)
	}
	if cs := tg.ConnString(ReadWrite, 0); cs != "host=l" {
		t.Fatalf("listener read-write: %q", cs)
	}
	s := tg.Summary()
	if len(s.Nodes) != 3 || s.Nodes[1].Addr != "s1:5432" || s.Listener != "l:5432" {
		t.Fatalf("summary %+v", s)
	}
}

func TestParseIntent(t *testing.T) {
	if i, err := ParseIntent("read-only"); err != nil || i != ReadOnly {
		t.Fatal(i, err)
	}
	// The listener's spellings are taken too (one vocabulary for the intent).
	for in, want := range map[string]Intent{"ReadOnly": ReadOnly, "readonly": ReadOnly, "ro": ReadOnly,
		"read_only": ReadOnly, "rw": ReadWrite, "read-write": ReadWrite, "ReadWrite": ReadWrite} {
		if i, err := ParseIntent(in); err != nil || i != want {
			t.Errorf("ParseIntent(%q) = %q, %v; want %q", in, i, err, want)
		}
	}
	if _, err := ParseIntent("write-only"); !agerr.IsBadInput(err) || !strings.Contains(err.Error(), "--intent") {
		t.Fatal(err)
	}
}
