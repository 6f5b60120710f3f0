package table

import (
	"fmt"
	"maps"
	"slices"

	"github.com/agbench/agbench/internal/result"
)

// Standby lag columns: where a step's database sampler says how it measured its standbys'
// lag (the sample section's Lag, internal/sample), each standby gets a column of its
// replay lag in seconds at the end of the step's window, the figure the analysis judges;
// "–" where it was not measured. A primary whose standbys could not be named (its login may
// not read pg_stat_replication, and the sampler watched none of them) has one column
// "standby lag s", absent. LagNotes say where each figure came from and why one is absent.
// Results written before the samplers named their lag's source have no such column.

// lagAnyStandby is the column of the standbys a primary's login could not name.
const lagAnyStandby = ""

// stepLag is one standby's entry in a step's sample section, with the primary that
// reported it.
type stepLag struct {
	primary string
	result.StandbyLag
}

// stepLags are the step's standby lag entries by standby name; nil when it has none or its
// section does not decode.
func stepLags(st *result.Step) map[string]stepLag {
	x, err := st.Sample()
	if err != nil || x == nil {
		return nil
	}
	out := map[string]stepLag{}
	for _, primary := range slices.Sorted(maps.Keys(x.Nodes)) {
		for _, l := range x.Nodes[primary].Lag {
			if _, ok := out[l.Standby]; !ok {
				out[l.Standby] = stepLag{primary: primary, StandbyLag: l}
			}
		}
	}
	return out
}

// StandbyLag is a standby's replay lag in seconds at the end of the step's window, as the
// sampler measured it; false when the step did not measure it.
func StandbyLag(st *result.Step, standby string) (float64, bool) {
	l, ok := stepLags(st)[standby]
	if !ok || l.Method == "" || l.Absent != "" {
		return 0, false
	}
	v, ok := st.Counters[result.PGStandbyName(l.primary, standby, result.PGReplayLagSeconds)]
	return v, ok
}

// LagStandbys are the standbys whose lag some step of the results measured or tried to, by
// name ("" for a primary's standbys that could not be named).
func LagStandbys(rs ...*result.Result) []string {
	seen := map[string]bool{}
	for _, r := range rs {
		for i := range r.Steps {
			for s := range stepLags(&r.Steps[i]) {
				seen[s] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// LagColumns are the results' standby lag columns, one per standby (LagStandbys).
func LagColumns(rs ...*result.Result) []Column {
	var out []Column
	for _, s := range LagStandbys(rs...) {
		head := "standby lag s"
		if s != lagAnyStandby {
			head = s + " lag s"
		}
		out = append(out, Column{Header: head, Format: "%.2f", Value: func(st *result.Step) (float64, bool) { return StandbyLag(st, s) }})
	}
	return out
}

// WithLag returns cols followed by the result's standby lag columns.
func WithLag(r *result.Result, cols []Column) []Column {
	lag := LagColumns(r)
	if len(lag) == 0 {
		return cols
	}
	return append(append([]Column(nil), cols...), lag...)
}

// lagSources describes each source of a lag figure.
var lagSources = map[string]string{
	result.LagFromStatReplication: "pg_stat_replication.replay_lag on its primary (a superuser, pg_monitor or pg_read_all_stats; 0 when it had replayed all WAL)",
	result.LagFromPositions:       "its pg_last_wal_replay_lsn() against the primary's pg_current_wal_lsn() read ten times a second (any login; the time since the primary was at the standby's position)",
}

// LagNotes say, for the results' standby lag columns, where each standby's figures came
// from and why any was absent, each once: "node1 lag: pg_stat_replication…".
func LagNotes(rs ...*result.Result) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, r := range rs {
		for i := range r.Steps {
			lags := stepLags(&r.Steps[i])
			for _, s := range slices.Sorted(maps.Keys(lags)) {
				l := lags[s]
				name := "standby lag"
				if s != lagAnyStandby {
					name = s + " lag"
				}
				if src, ok := lagSources[l.Method]; ok && l.Absent == "" {
					add(fmt.Sprintf("%s from %s: %s", name, l.Method, src))
				}
				if l.Absent != "" {
					add(fmt.Sprintf("%s %s: %s", name, Absent, l.Absent))
				}
			}
		}
	}
	return out
}
