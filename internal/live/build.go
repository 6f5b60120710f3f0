package live

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/agbench/agbench/internal/workload/tpcc"
)

// ShowBuild shows a tpcc build's progress on w until the returned function is called: a
// bar with rows/s and time left on a terminal, a line every few seconds otherwise.
func ShowBuild(w io.Writer, interactive bool, p *tpcc.Progress) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var bar *progressbar.ProgressBar
		tick := 5 * time.Second
		if interactive {
			tick = 200 * time.Millisecond
		}
		t := time.NewTicker(tick)
		defer t.Stop()
		start := time.Now()
		lastPhase := ""
		for {
			select {
			case <-done:
				if bar != nil {
					_ = bar.Finish()
					fmt.Fprintln(w)
				}
				return
			case <-t.C:
			}
			phase, rows, total := p.Snapshot()
			if interactive && phase == tpcc.PhaseLoad {
				if bar == nil {
					bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
						progressbar.OptionSetDescription("load"), progressbar.OptionShowCount(),
						progressbar.OptionSetItsString("rows"), progressbar.OptionShowIts(),
						progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond))
				}
				_ = bar.Set64(min(rows, total))
				continue
			}
			if phase != tpcc.PhaseLoad && phase != lastPhase && phase != "" {
				if bar != nil {
					_ = bar.Finish()
					fmt.Fprintln(w)
					bar = nil
				}
				fmt.Fprintf(w, "%s ...\n", phase)
			} else if phase == tpcc.PhaseLoad && !interactive {
				el := time.Since(start).Seconds()
				rate := float64(rows) / el
				left := "?"
				if rate > 0 {
					left = fmt.Sprintf("%.0fs", float64(total-rows)/rate)
				}
				fmt.Fprintf(w, "load: %d of ~%d rows (%.0f%%), %.0f rows/s, %s left\n", rows, total,
					100*float64(rows)/float64(total), rate, left)
			}
			lastPhase = phase
		}
	}()
	return func() { close(done); <-finished }
}
