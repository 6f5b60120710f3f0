package experiment

import (
	"github.com/agbench/agbench/internal/agerr"
)

// Default pool of a run of terminals: one session per defaultTerminalsPerSession
// terminals, at most maxDefaultSessions. A terminal of the specification asks for a
// transaction about every 21 s, so 20 terminals keep a session busy only when a
// transaction takes a second; 1,000 terminals on 50 sessions leave room to queue.
const (
	defaultTerminalsPerSession = 20
	maxDefaultSessions         = 50
)

// sessions is the pool of a run of terminals: --sessions, or the default for --terminals.
func (s *TPCCRun) sessions() int {
	if s.Sessions > 0 {
		return s.Sessions
	}
	n := (s.Terminals + defaultTerminalsPerSession - 1) / defaultTerminalsPerSession
	return max(1, min(n, maxDefaultSessions, s.Terminals))
}

// checkTerminals checks the flags of a run of terminals: a pool no larger than the
// terminals, and none of the flags that do not apply to terminals.
func (s *TPCCRun) checkTerminals() []error {
	var errs []error
	switch {
	case s.Terminals == 0 && s.Sessions != 0:
		errs = append(errs, agerr.BadInputf("--sessions needs --terminals (the pool the terminals are served over)"))
	case s.Terminals == 0:
		errs = append(errs, agerr.BadInputf("--think-scale needs --terminals (it scales the terminals' think times)"))
	case s.Terminals < 0:
		errs = append(errs, agerr.BadInputf("--terminals %d: must be 1 or more (--sessions and --think-scale apply to terminals)", s.Terminals))
	case s.Sessions < 0:
		errs = append(errs, agerr.BadInputf("--sessions %d: must be 1 or more", s.Sessions))
	case s.Sessions > s.Terminals:
		errs = append(errs, agerr.BadInputf("--terminals %d: fewer than the pool's --sessions %d; a session without a terminal would only wait", s.Terminals, s.Sessions))
	}
	if s.ThinkScale <= 0 || s.ThinkScale > 1 {
		errs = append(errs, agerr.BadInputf("--think-scale %g: must be above 0 and at most 1", s.ThinkScale))
	}
	if s.VUs != "1" {
		errs = append(errs, agerr.BadInputf("--vus %s: not with --terminals; the terminals' sessions are --sessions", s.VUs))
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{s.Rate != 0, "--rate"}, {s.readIntent(), "--read-intent and --compare"}, {s.StaleProbe != "", "--stale-probe"}} {
		if f.set {
			errs = append(errs, agerr.BadInputf("%s: not with --terminals, whose pace the keying and think times set and whose sessions are all on the primary", f.name))
		}
	}
	return errs
}

// loadFlag names the flag and value that asked for the load's sessions ("--vus 1,2,4").
func (g given) loadFlag() string {
	f := g.LoadFlag
	if f == "" {
		f = "--vus"
	}
	return f + " " + g.Load
}
