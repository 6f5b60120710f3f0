package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agbench/agbench/internal/result"
)

// Read intent: sessions that declared read intent belong on a standby whenever
// the target has one to reach (a standby given, or a listener that routes), and a routing
// comparison's routing=on variant sends them there. Where they landed is read from the
// steps' sessions (stress, scan: one session per thread, pg_is_in_recovery() asked when it
// began) or, for tpcc, from its counters of read transactions by where they ran.

// Read-intent units: what a run counted where it landed.
const (
	unitSessions     = "sessions"
	unitTransactions = "transactions"
)

// ReadIntentConfig is the result's config key saying the sessions' intent ("read-only",
// "read-write"), as stress and scan record it; tpcc records ReadIntentTPCCConfig.
const (
	ReadIntentConfig     = "intent"
	ReadIntentValue      = "read-only"
	ReadIntentTPCCConfig = "read_intent"
	routingParam         = "routing"
)

// readIntentOf counts the read intent of a variant's steps that belonged on a standby, and
// how much of it found itself on one: tpcc's read transactions when the run declared them,
// else, for the commands that record their sessions' intent (stress, scan), the sessions of
// a read-only run whose target had a standby to reach, or of a routing=on variant. primaries names the nodes that took read intent while not standbys.
func readIntentOf(r *result.Result, steps []result.Step) (all, onStandby int64, unit string, primaries []string) {
	if v, _ := r.Meta.Config[ReadIntentTPCCConfig].(bool); v {
		for _, st := range steps {
			if st.Params[routingParam] == "off" {
				continue
			}
			on, ok := st.Counters[result.ReadTxOnStandby]
			if !ok {
				continue
			}
			all += int64(on + st.Counters[result.ReadTxOnPrimary])
			onStandby += int64(on)
		}
		return all, onStandby, unitTransactions, nil
	}
	intent, ok := r.Meta.Config[ReadIntentConfig].(string)
	if !ok { // not a command whose every session is one of the load's (tpcc's are not)
		return 0, 0, "", nil
	}
	seen := map[string]bool{}
	for _, st := range steps {
		switch st.Params[routingParam] {
		case "off":
			continue
		case "on":
		default:
			if intent != ReadIntentValue || !standbyReachable(r.Meta.Topology) {
				continue
			}
		}
		for _, s := range st.Sessions {
			all += int64(s.Count)
			if s.InRecovery {
				onStandby += int64(s.Count)
			} else if !seen[s.Node] {
				seen[s.Node] = true
				primaries = append(primaries, s.Node)
			}
		}
	}
	sort.Strings(primaries)
	return all, onStandby, unitSessions, primaries
}

// standbyReachable says whether read intent had a standby to go to: a standby in the
// topology, or a listener that routes it.
func standbyReachable(t *result.Topology) bool {
	if t == nil {
		return false
	}
	return t.Listener != "" || slices.ContainsFunc(t.Nodes, func(n result.Node) bool { return n.Role == "standby" })
}

// readIntentVerdict fires when read intent that belonged on a standby ran elsewhere: the
// run then measured the primary, whatever its routing list allowed as a fallback.
func readIntentVerdict(f Facts) *Verdict {
	if f.ReadIntentSessions <= 0 || f.ReadIntentOnStandby >= f.ReadIntentSessions {
		return nil
	}
	unit := f.ReadIntentUnit
	if unit == "" {
		unit = unitSessions + " (or " + unitTransactions + ")"
	}
	where := "did not run on a standby"
	if len(f.ReadIntentPrimaries) > 0 {
		where = "ran on the primary (" + strings.Join(f.ReadIntentPrimaries, ", ") + "), not on a standby"
	}
	return &Verdict{Code: VReadIntent, Message: fmt.Sprintf("%d of %d read-intent %s %s: the run measured the primary, not the standbys its intent asked for (a standby down, or a routing list that falls back to the primary)",
		f.ReadIntentSessions-f.ReadIntentOnStandby, f.ReadIntentSessions, unit, where)}
}
