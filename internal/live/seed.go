package live

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/agbench/agbench/internal/experiment"
	"github.com/agbench/agbench/internal/seed"
	"github.com/agbench/agbench/internal/units"
)

// Seed shows a seeding's progress: a bar per phase on a terminal (on Stdout, where the
// seeding's table follows), a line every few seconds otherwise (on Stderr); and the
// growing of the database before it.
type Seed struct {
	Stdout, Stderr io.Writer
	Interactive    bool

	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	phase    string
	last     time.Time
	initLast time.Time
}

// lineEvery is how often plain progress lines are written.
const lineEvery = 2 * time.Second

// initLineEvery is how often a line says how far the database has grown.
const initLineEvery = 5 * time.Second

// Event shows one event of a seeding run; events of other kinds are ignored.
func (s *Seed) Event(e experiment.Event) {
	switch e := e.(type) {
	case experiment.SeedInit:
		if time.Since(s.initLast) > initLineEvery || e.Done >= e.Target {
			fmt.Fprintf(s.Stderr, "init: database %s of %s\n", units.FormatBytesShort(e.Done), units.FormatBytesShort(e.Target))
			s.initLast = time.Now()
		}
	case experiment.SeedInitDone:
		fmt.Fprintf(s.Stdout, "database %s is %s (table %s: %.0f%% random bytes, the rest repetitive text), made in %.1fs\n",
			e.Database, units.FormatBytesShort(e.Size), seed.DataTable, seed.RandomShare*100, e.Took.Seconds())
	case experiment.SeedBegin:
		if e.Compare {
			fmt.Fprintf(s.Stderr, "seeding %s\n", e.Run)
		}
		s.begin()
	case seed.Progress:
		s.update(e)
	case experiment.SeedEnded:
		s.done()
	}
}

// begin starts the display of a seeding afresh.
func (s *Seed) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bar, s.phase, s.last = nil, "", time.Time{}
}

func (s *Seed) update(p seed.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Phase != s.phase {
		s.finishBar()
		s.phase = p.Phase
		if !s.Interactive {
			fmt.Fprintf(s.Stderr, "%8.1fs  %s\n", p.Elapsed.Seconds(), p.Phase)
			s.last = time.Now()
			return
		}
	}
	if s.Interactive && p.Total > 0 {
		s.showBar(p)
		return
	}
	if time.Since(s.last) < lineEvery {
		return
	}
	s.last = time.Now()
	w := s.Stderr
	if s.Interactive {
		w = s.Stdout
	}
	writeLine(w, p)
}

// showBar shows a phase of known size as a bar of bytes.
func (s *Seed) showBar(p seed.Progress) {
	if s.bar == nil {
		s.bar = progressbar.NewOptions64(p.Total, progressbar.OptionSetWriter(s.Stdout), progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionShowCount())
	}
	if s.bar.GetMax64() < p.Total {
		s.bar.ChangeMax64(p.Total)
	}
	s.bar.Describe(fmt.Sprintf("%-9s %s", p.Phase, detail(p)))
	s.bar.Set64(min(p.Done, p.Total))
}

// writeLine writes one plain progress line.
func writeLine(w io.Writer, p seed.Progress) {
	switch {
	case p.Total > 0:
		eta := "?"
		if p.ETA >= 0 {
			eta = p.ETA.Round(time.Second).String()
		}
		fmt.Fprintf(w, "%8.1fs  %-9s %s of %s (%.0f%%)  %.1f MB/s  ETA %s  %s\n", p.Elapsed.Seconds(), p.Phase,
			units.FormatBytesShort(p.Done), units.FormatBytesShort(p.Total), 100*float64(p.Done)/float64(p.Total), p.Rate/1e6, eta, detail(p))
	case p.Phase == seed.PhaseCatchUp:
		lag := "not reported yet"
		if p.LagBytes != nil {
			lag = units.FormatBytesShort(*p.LagBytes)
		}
		fmt.Fprintf(w, "%8.1fs  %-9s %s  replay lag %s\n", p.Elapsed.Seconds(), p.Phase, p.ServerPhase, lag)
	default:
		fmt.Fprintf(w, "%8.1fs  %-9s %s\n", p.Elapsed.Seconds(), p.Phase, p.ServerPhase)
	}
}

// detail says what the transfer waits on and what it uses.
func detail(p seed.Progress) string {
	var parts []string
	if p.Wait != "" {
		parts = append(parts, "waits on "+p.Wait)
	}
	if p.Device != "" {
		parts = append(parts, fmt.Sprintf("%s %.0f%% busy", p.Device, p.DiskUtil*100))
	}
	if p.SenderCores > 0 || p.ReceiverCores > 0 {
		parts = append(parts, fmt.Sprintf("CPU sender %.2f receiver %.2f", p.SenderCores, p.ReceiverCores))
	}
	if p.WireBytes > 0 {
		parts = append(parts, "wire "+units.FormatBytesShort(p.WireBytes))
	}
	return strings.Join(parts, ", ")
}

func (s *Seed) finishBar() {
	if s.bar != nil {
		s.bar.Finish()
		fmt.Fprintln(s.Stdout)
		s.bar = nil
	}
}

func (s *Seed) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishBar()
}
