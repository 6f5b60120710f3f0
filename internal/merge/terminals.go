package merge

import (
	"maps"

	"github.com/agbench/agbench/internal/agerr"
	"github.com/agbench/agbench/internal/result"
)

// mergeTerminals puts the merged terminals section of the parts (result.MergeTerminals) in
// st, in a copy of the lowest segment's sections: each segment emulated only its share.
func mergeTerminals(st *result.Step, parts []*result.Step, idx []int) error {
	var ts []*result.TerminalsStep
	for k, p := range parts {
		t, err := p.Terminals()
		if err != nil {
			return agerr.BadInputf("step %d of segment %d: %v", p.Index+1, idx[k], err)
		}
		ts = append(ts, t)
	}
	merged, err := result.MergeTerminals(ts)
	if err != nil {
		return agerr.BadInputf("step %d: %v", st.Index+1, err)
	}
	if merged == nil {
		return nil
	}
	st.Extra = maps.Clone(st.Extra)
	return st.SetExtra(result.ExtraTerminals, merged)
}
