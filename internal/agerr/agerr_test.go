package agerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"plain", base, ExitFailure},
		{"bad input", BadInputf("--standbys must be 0..9, got %d", 12), ExitBadInput},
		{"wrapped bad input", fmt.Errorf("create: %w", BadInput(base)), ExitBadInput},
		{"joined", Join(base, BadInputf("--name: empty")), ExitBadInput},
		{"joined plain", Join(base, errors.New("other")), ExitFailure},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("%s: ExitCode(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
}

func TestBadInputfWraps(t *testing.T) {
	base := errors.New("no such file")
	err := BadInputf("--query-file q.sql: %w", base)
	if !errors.Is(err, base) {
		t.Fatalf("BadInputf lost the wrapped error: %v", err)
	}
	if err.Error() != "--query-file q.sql: no such file" {
		t.Fatalf("message = %q", err.Error())
	}
	if Join() != nil || BadInput(nil) != nil {
		t.Fatal("nil in, nil out")
	}
}
