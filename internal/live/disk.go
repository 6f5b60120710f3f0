package live

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/agbench/agbench/internal/experiment"
)

// Disk shows a disk run's progress: the test file's creation and each step, as a bar on a
// terminal and as lines otherwise, all on W.
type Disk struct {
	W           io.Writer
	Interactive bool
	// Path is the test file, named while it is created.
	Path string

	fillBar *progressbar.ProgressBar
	lastPct int64
	stop    func()
}

// NewDisk returns the display of a run over the test file path.
func NewDisk(w io.Writer, interactive bool, path string) *Disk {
	return &Disk{W: w, Interactive: interactive, Path: path, lastPct: -1, stop: func() {}}
}

func (s *Disk) logf(format string, v ...any) { fmt.Fprintf(s.W, format+"\n", v...) }

// Fill shows the test file's creation: done of total bytes written (diskio's
// PrepareOptions.Progress).
func (s *Disk) Fill(done, total int64) {
	if s.Interactive {
		if s.fillBar == nil {
			s.fillBar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(s.W), progressbar.OptionShowBytes(true),
				progressbar.OptionSetDescription("creating "+s.Path), progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		_ = s.fillBar.Set64(done)
		if done == total {
			_ = s.fillBar.Finish()
		}
		return
	}
	if pct := done * 100 / total; pct/10 != s.lastPct/10 {
		s.lastPct = pct
		s.logf("creating %s: %d%%", s.Path, pct)
	}
}

// Event shows one event of the run: a line it logs, a step beginning or ending.
func (s *Disk) Event(e experiment.Event) {
	switch e := e.(type) {
	case experiment.Log:
		s.logf("%s", e.Line)
	case experiment.DiskStep:
		w := e.Workload
		desc := fmt.Sprintf("step %d/%d: %s, %s + %s warm-up", e.I+1, e.N, w.Describe(), w.Duration, w.Warmup)
		if s.Interactive {
			s.stop = timeBar(s.W, desc, w.Warmup+w.Duration)
		} else {
			s.logf("%s", desc)
		}
	case experiment.DiskStepEnded:
		s.stop()
		s.stop = func() {}
	}
}

// timeBar shows a step's time on a terminal until the returned function is called.
func timeBar(w io.Writer, desc string, total time.Duration) func() {
	bar := progressbar.NewOptions64(total.Milliseconds(), progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(desc),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				_ = bar.Finish()
				return
			case <-t.C:
				_ = bar.Set64(min(time.Since(start).Milliseconds(), total.Milliseconds()))
			}
		}
	}()
	return func() { close(done); <-finished }
}
