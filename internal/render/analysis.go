package render

import (
	"io"

	"github.com/agbench/agbench/internal/analyze"
)

// Analysis ends a workload's output with internal/analyze's text: per variant the knee
// line, the saturation sentence and the validity verdicts, then the comparison of variants
// ("no difference measured" where their spreads overlap). Nothing when run is nil (the run
// measured no step).
func Analysis(w io.Writer, run *analyze.Run) {
	if run != nil {
		_ = run.WriteText(w)
	}
}
